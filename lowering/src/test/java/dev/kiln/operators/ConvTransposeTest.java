package dev.kiln.operators;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.placeholder;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Select;
import dev.kiln.nn.ConvParams;
import dev.kiln.nn.ConvTranspose;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Tensor;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Transposed conv2d NHWC (weights [KH, KW, CI, CO/groups]) and NCHW (weights [CI, CO/groups, KH, KW]),
 * and transposed convs of any layout and spatial rank (1-D, 2-D, 3-D), against PyTorch's ConvTranspose
 * semantics written as a scatter: each input element adds {@code x * w[kh, kw]} to output
 * (ih * stride - padTop + kh * dilation, ...). The cases cover both of the operator's forms (the phase
 * decomposition for stride above 1 and dilation 1, the dilated input otherwise). float32, rtol 1e-5,
 * atol 1e-5.
 */
class ConvTransposeTest {

    record Case(
            String label,
            int n,
            int h,
            int w,
            int ci,
            int co,
            int k,
            int stride,
            int pt,
            int pb,
            int pl,
            int pr,
            int dil,
            int outPad,
            int groups) {
        int oh() {
            return (h - 1) * stride - pt - pb + dil * (k - 1) + outPad + 1;
        }

        int ow() {
            return (w - 1) * stride - pl - pr + dil * (k - 1) + outPad + 1;
        }

        ConvParams params() {
            return ConvParams.of(2, stride, 0)
                    .withPadding2d(pt, pb, pl, pr)
                    .withDilation(dil)
                    .withGroups(groups);
        }

        @Override
        public String toString() {
            return label;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                // the four T2D workloads (K 4, stride 2, pad 1) with fewer channels
                new Case("T2D #1 (1,4,4,512,256) -> (1,4,4,8,6)", 1, 4, 4, 8, 6, 4, 2, 1, 1, 1, 1, 1, 0, 1),
                new Case("T2D #2 (1,8,8,256,128) -> (1,8,8,8,4)", 1, 8, 8, 8, 4, 4, 2, 1, 1, 1, 1, 1, 0, 1),
                new Case("T2D #3 (1,16,16,128,64) -> (1,16,16,6,4)", 1, 16, 16, 6, 4, 4, 2, 1, 1, 1, 1, 1, 0, 1),
                new Case("T2D #4 (1,32,32,64,3) -> (1,32,32,4,3)", 1, 32, 32, 4, 3, 4, 2, 1, 1, 1, 1, 1, 0, 1),
                new Case("T2D #1 reduced (1,4,4,6,5)", 1, 4, 4, 6, 5, 4, 2, 1, 1, 1, 1, 1, 0, 1),
                new Case("odd 5x3, 3x3, stride 1, no padding", 1, 5, 3, 3, 4, 3, 1, 0, 0, 0, 0, 1, 0, 1),
                new Case("stride 2, pad 1, output padding 1, batch 2", 2, 3, 4, 4, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1),
                new Case("K 3, stride 2, no padding", 1, 4, 5, 3, 2, 3, 2, 0, 0, 0, 0, 1, 0, 1),
                new Case("K 4, stride 2, no padding", 1, 3, 4, 3, 2, 4, 2, 0, 0, 0, 0, 1, 0, 1),
                new Case("K 2, stride 2, no padding (no pad stage)", 1, 3, 4, 3, 2, 2, 2, 0, 0, 0, 0, 1, 0, 1),
                new Case("K 5, stride 3, pad 1, output padding 2", 1, 4, 3, 3, 2, 5, 3, 1, 1, 1, 1, 1, 2, 1),
                new Case("K 2 below stride 3 (phases without taps)", 1, 3, 4, 2, 3, 2, 3, 0, 0, 1, 0, 1, 1, 1),
                new Case("dilation 2, pad 2", 1, 4, 5, 2, 3, 3, 1, 2, 2, 2, 2, 2, 0, 1),
                new Case("dilation 2, stride 2 (dilate_pad)", 1, 4, 3, 2, 3, 3, 2, 1, 2, 0, 1, 2, 1, 1),
                new Case("padding larger than the kernel", 1, 6, 6, 2, 3, 2, 2, 3, 3, 3, 3, 1, 0, 1),
                new Case("K 5, stride 2, padding 4 and 3, 2 and 5", 1, 6, 7, 2, 3, 5, 2, 4, 3, 2, 5, 1, 1, 1),
                new Case("groups 2, stride 2, output padding 1", 1, 5, 4, 4, 6, 3, 2, 1, 1, 1, 1, 1, 1, 2),
                new Case("groups 3, K 4, stride 2, pad 1", 1, 3, 3, 6, 3, 4, 2, 1, 1, 1, 1, 1, 0, 3),
                new Case("asymmetric padding, stride 3", 1, 4, 3, 3, 2, 3, 3, 0, 1, 2, 1, 1, 0, 1));
    }

    /** Reduction steps per output along one axis: ceil(K / stride) for the phase form, K otherwise. */
    static long taps(int k, int stride, int dil) {
        return stride > 1 && dil == 1 ? (k + stride - 1) / stride : k;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void nhwcMatchesScatter(Case c) {
        Tensor data = placeholder("data", FLOAT32, c.n, c.h, c.w, c.ci);
        Tensor weight = placeholder("weight", FLOAT32, c.k, c.k, c.ci, c.co / c.groups);
        Tensor out = ConvTranspose.conv2dTransposeNhwc(data, weight, c.params(), c.outPad);
        assertThat(out.shape().toArray()).containsExactly(c.n, c.oh(), c.ow(), c.co);
        assertThat(ComputeDAG.of(out).flopCount())
                .isEqualTo(2L
                        * c.n
                        * c.oh()
                        * c.ow()
                        * c.co
                        * (c.ci / c.groups)
                        * taps(c.k, c.stride, c.dil)
                        * taps(c.k, c.stride, c.dil));
        ConvTesting.check(out, List.of(data, weight), 51, in -> scatter(c, in[0], in[1], true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void nchwMatchesScatter(Case c) {
        Tensor data = placeholder("data", FLOAT32, c.n, c.ci, c.h, c.w);
        Tensor weight = placeholder("weight", FLOAT32, c.ci, c.co / c.groups, c.k, c.k);
        Tensor out = ConvTranspose.conv2dTransposeNchw(data, weight, c.params(), c.outPad);
        assertThat(out.shape().toArray()).containsExactly(c.n, c.co, c.oh(), c.ow());
        ConvTesting.check(out, List.of(data, weight), 52, in -> scatter(c, in[0], in[1], false));
    }

    @Test
    void stageStructure() {
        Tensor data = placeholder("data", FLOAT32, 1, 4, 4, 3);
        Tensor weight = placeholder("weight", FLOAT32, 3, 3, 3, 2);
        // stride 1 and padding = K - 1: the dilate/pad stage would be the identity
        assertThat(ConvTesting.stages(ConvTranspose.conv2dTransposeNhwc(data, weight, 1, 2)))
                .containsExactly("conv2d_transpose_nhwc");

        // T2D: K 4, stride 2, pad 1, output 8x8. The phase form reads the input padded by
        // ceil(4 / 2) - 1 - 1 / 2 = 1 before and (8 - 1 + 1) / 2 - 3 = 1 after, no zeros in between
        Tensor weight4 = placeholder("weight", FLOAT32, 4, 4, 3, 2);
        Tensor t2d = ConvTranspose.conv2dTransposeNhwc(data, weight4, 2, 1);
        assertThat(ConvTesting.stages(t2d)).containsExactly("pad", "conv2d_transpose_nhwc");
        assertThat(t2d.shape().toArray()).containsExactly(1, 8, 8, 2);
        assertThat(t2d.op().inputTensors().get(0).shape().toArray()).containsExactly(1, 6, 6, 3);
        ComputeOp op = (ComputeOp) t2d.op();
        // in the weight layout's order (H, W, I); each spatial axis counts the 2 taps of one phase
        assertThat(op.reduceAxes().stream().map(a -> a.name() + "=" + a.extent()))
                .containsExactly("rh=2", "rw=2", "rc=3");
        // K % stride == 0: no condition on the reduction, no select in the operator
        assertThat(((Reduce) op.body()).condition()).isEqualTo(IntImm.bool(true));
        assertThat(hasSelect(op.body())).isFalse();
        // per output: CI * ceil(K / s)^2 multiply-adds, a quarter of the K^2 of the dilated form
        long dilated = 2L * 8 * 8 * 2 * 3 * 4 * 4;
        assertThat(ComputeDAG.of(t2d).flopCount()).isEqualTo(dilated / 4);

        // K 3, stride 2: the third tap exists for even phases only, the reduction's condition says so
        Tensor k3 = ConvTranspose.conv2dTransposeNhwc(data, weight, 2, 1);
        assertThat(ConvTesting.stages(k3)).containsExactly("pad", "conv2d_transpose_nhwc");
        assertThat(((Reduce) ((ComputeOp) k3.op()).body()).condition()).isNotEqualTo(IntImm.bool(true));
        assertThat(ComputeDAG.of(k3).flopCount()).isEqualTo(2L * 7 * 7 * 2 * 3 * 2 * 2);

        // K 2, stride 2, no padding: every read is inside the input, no stage before the operator
        Tensor weight2 = placeholder("weight", FLOAT32, 2, 2, 3, 2);
        assertThat(ConvTesting.stages(ConvTranspose.conv2dTransposeNhwc(data, weight2, 2, 0)))
                .containsExactly("conv2d_transpose_nhwc");

        // dilation 2 keeps the dilated form: (4 - 1) * 2 + 1 = 7 dilated rows, 2 * 2 - 1 = 3 more on each side
        Tensor dilated2 = ConvTranspose.conv2dTransposeNhwc(
                data, weight, ConvParams.of(2, 2, 1).withDilation(2));
        assertThat(ConvTesting.stages(dilated2)).containsExactly("dilate_pad", "conv2d_transpose_nhwc");
        assertThat(dilated2.op().inputTensors().get(0).shape().toArray()).containsExactly(1, 13, 13, 3);
    }

    private static boolean hasSelect(Expr e) {
        boolean[] found = {false};
        Exprs.forEach(e, x -> found[0] |= x instanceof Select);
        return found[0];
    }

    @Test
    void identityStageCaseMatchesScatter() {
        Case c = new Case("stride 1, pad K-1", 1, 5, 4, 3, 2, 3, 1, 2, 2, 2, 2, 1, 0, 1);
        Tensor data = placeholder("data", FLOAT32, c.n, c.h, c.w, c.ci);
        Tensor weight = placeholder("weight", FLOAT32, c.k, c.k, c.ci, c.co);
        Tensor out = ConvTranspose.conv2dTransposeNhwc(data, weight, 1, 2);
        ConvTesting.check(out, List.of(data, weight), 53, in -> scatter(c, in[0], in[1], true));
    }

    /**
     * A transposed convolution through {@link ConvTranspose#convTranspose} in any layout and
     * spatial rank, with per-axis kernel, stride, padding, dilation and output padding.
     */
    record NdCase(
            String label,
            String dataLayout,
            String kernelLayout,
            int n,
            int ci,
            int co,
            int groups,
            int[] in,
            int[] k,
            int[] stride,
            int[] pb,
            int[] pa,
            int[] dil,
            int[] outPad) {
        int rank() {
            return in.length;
        }

        int out(int i) {
            return (in[i] - 1) * stride[i] - pb[i] - pa[i] + dil[i] * (k[i] - 1) + outPad[i] + 1;
        }

        ConvParams params() {
            return ConvParams.of(rank(), 1, 0)
                    .withStride(longs(stride))
                    .withPadding(longs(pb), longs(pa))
                    .withDilation(longs(dil))
                    .withGroups(groups);
        }

        /** Extents by layout letter: data (N, C, spatial = in), weight (I, O, spatial = k), output. */
        int[] dims(String role) {
            int[] d = new int[128];
            String spatial = spatialLetters();
            for (int i = 0; i < rank(); i++) {
                d[spatial.charAt(i)] = switch (role) {
                    case "data" -> in[i];
                    case "weight" -> k[i];
                    default -> out(i);
                };
            }
            d['N'] = n;
            d['C'] = role.equals("out") ? co : ci;
            d['I'] = ci;
            d['O'] = co / groups;
            return d;
        }

        String spatialLetters() {
            return dataLayout.replace("N", "").replace("C", "");
        }

        long[] shape(String role) {
            String layout = role.equals("weight") ? kernelLayout : dataLayout;
            int[] d = dims(role);
            return layout.chars().mapToLong(ch -> d[ch]).toArray();
        }

        @Override
        public String toString() {
            return label;
        }
    }

    static Stream<NdCase> ndCases() {
        return Stream.of(
                new NdCase(
                        "1-D NCW, K 4, stride 2, pad 1, output padding 1",
                        "NCW",
                        "IOW",
                        2,
                        3,
                        4,
                        1,
                        ints(5),
                        ints(4),
                        ints(2),
                        ints(1),
                        ints(1),
                        ints(1),
                        ints(1)),
                new NdCase(
                        "1-D NWC, K 5, stride 3, pad 2 and 1, groups 2",
                        "NWC",
                        "WIO",
                        1,
                        4,
                        6,
                        2,
                        ints(6),
                        ints(5),
                        ints(3),
                        ints(2),
                        ints(1),
                        ints(1),
                        ints(0)),
                new NdCase(
                        "3-D NCDHW, K 4x3x2, strides 2,2,3, uneven padding",
                        "NCDHW",
                        "IODHW",
                        1,
                        3,
                        2,
                        1,
                        ints(3, 4, 3),
                        ints(4, 3, 2),
                        ints(2, 2, 3),
                        ints(1, 0, 1),
                        ints(1, 2, 0),
                        ints(1, 1, 1),
                        ints(0, 1, 2)),
                new NdCase(
                        "3-D NDHWC, K 4, stride 2, pad 1, groups 2",
                        "NDHWC",
                        "DHWIO",
                        1,
                        4,
                        4,
                        2,
                        ints(2, 3, 3),
                        ints(4, 4, 4),
                        ints(2, 2, 2),
                        ints(1, 1, 1),
                        ints(1, 1, 1),
                        ints(1, 1, 1),
                        ints(0, 0, 0)),
                new NdCase(
                        "2-D NHWC, strides 2 and 1 (phase H, plain W)",
                        "NHWC",
                        "HWIO",
                        1,
                        3,
                        2,
                        1,
                        ints(4, 5),
                        ints(3, 3),
                        ints(2, 1),
                        ints(1, 1),
                        ints(1, 0),
                        ints(1, 1),
                        ints(1, 0)),
                new NdCase(
                        "2-D NCHW, stride 2, dilations 1 and 2 (phase H, dilated W)",
                        "NCHW",
                        "IOHW",
                        1,
                        2,
                        3,
                        1,
                        ints(4, 3),
                        ints(4, 3),
                        ints(2, 2),
                        ints(1, 1),
                        ints(1, 2),
                        ints(1, 2),
                        ints(0, 1)),
                new NdCase(
                        "2-D NHWC, OIHW weights, K 3x4, strides 3 and 2",
                        "NHWC",
                        "OIHW",
                        1,
                        2,
                        3,
                        1,
                        ints(3, 4),
                        ints(3, 4),
                        ints(3, 2),
                        ints(0, 1),
                        ints(2, 2),
                        ints(1, 1),
                        ints(2, 1)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ndCases")
    void anyLayoutAndRankMatchesScatter(NdCase c) {
        Tensor data = placeholder("data", FLOAT32, c.shape("data"));
        Tensor weight = placeholder("weight", FLOAT32, c.shape("weight"));
        Tensor out = ConvTranspose.convTranspose(
                "conv_transpose", data, weight, c.dataLayout, c.kernelLayout, c.params(), longs(c.outPad));
        assertThat(out.shape().toArray()).containsExactly(c.shape("out"));
        long flops = 2L * c.n * c.co * (c.ci / c.groups);
        for (int i = 0; i < c.rank(); i++) flops *= c.out(i) * taps(c.k[i], c.stride[i], c.dil[i]);
        assertThat(ComputeDAG.of(out).flopCount()).isEqualTo(flops);
        ConvTesting.check(out, List.of(data, weight), 54, in -> scatterNd(c, in[0], in[1]));
    }

    /** Each input element adds {@code x * w[k]} to output {@code i * stride - padBefore + k * dilation} per axis. */
    private static float[] scatterNd(NdCase c, float[] x, float[] w) {
        int r = c.rank();
        String sp = c.spatialLetters();
        int[] dd = c.dims("data"), wd = c.dims("weight"), od = c.dims("out");
        int cig = c.ci / c.groups, cog = c.co / c.groups;
        int[] xi = new int[128], wi = new int[128], oi = new int[128];
        double[] acc = new double[(int) Arrays.stream(c.shape("out")).reduce(1, (a, b) -> a * b)];
        int[] pos = new int[r], tap = new int[r];
        for (int n = 0; n < c.n; n++)
            for (int i = 0; i < c.ci; i++)
                for (int p = 0; p < product(c.in); p++) {
                    unflatten(p, c.in, pos);
                    xi['N'] = n;
                    xi['C'] = i;
                    for (int a = 0; a < r; a++) xi[sp.charAt(a)] = pos[a];
                    float v = x[flat(c.dataLayout, dd, xi)];
                    for (int t = 0; t < product(c.k); t++) {
                        unflatten(t, c.k, tap);
                        boolean inside = true;
                        for (int a = 0; a < r; a++) {
                            int o = pos[a] * c.stride[a] - c.pb[a] + tap[a] * c.dil[a];
                            inside &= o >= 0 && o < c.out(a);
                            oi[sp.charAt(a)] = o;
                            wi[sp.charAt(a)] = tap[a];
                        }
                        if (!inside) continue;
                        for (int j = 0; j < cog; j++) {
                            wi['I'] = i;
                            wi['O'] = j;
                            oi['N'] = n;
                            oi['C'] = (i / cig) * cog + j;
                            acc[flat(c.dataLayout, od, oi)] += v * w[flat(c.kernelLayout, wd, wi)];
                        }
                    }
                }
        float[] out = new float[acc.length];
        for (int i = 0; i < out.length; i++) out[i] = (float) acc[i];
        return out;
    }

    /** The row-major offset of the element whose index along layout letter {@code ch} is {@code idx[ch]}. */
    private static int flat(String layout, int[] dims, int[] idx) {
        int at = 0;
        for (char ch : layout.toCharArray()) at = at * dims[ch] + idx[ch];
        return at;
    }

    private static int product(int[] v) {
        int p = 1;
        for (int e : v) p *= e;
        return p;
    }

    private static void unflatten(int p, int[] extents, int[] into) {
        for (int a = extents.length - 1; a >= 0; a--) {
            into[a] = p % extents[a];
            p /= extents[a];
        }
    }

    private static int[] ints(int... v) {
        return v;
    }

    private static long[] longs(int[] v) {
        return Arrays.stream(v).asLongStream().toArray();
    }

    private static float[] scatter(Case c, float[] x, float[] w, boolean nhwc) {
        int oh = c.oh(), ow = c.ow(), cig = c.ci / c.groups, cog = c.co / c.groups;
        double[] acc = new double[c.n * c.co * oh * ow];
        for (int n = 0; n < c.n; n++)
            for (int i = 0; i < c.ci; i++)
                for (int y = 0; y < c.h; y++)
                    for (int xx = 0; xx < c.w; xx++) {
                        float v = nhwc
                                ? x[((n * c.h + y) * c.w + xx) * c.ci + i]
                                : x[((n * c.ci + i) * c.h + y) * c.w + xx];
                        for (int ky = 0; ky < c.k; ky++)
                            for (int kx = 0; kx < c.k; kx++) {
                                int oy = y * c.stride - c.pt + ky * c.dil, ox = xx * c.stride - c.pl + kx * c.dil;
                                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                                for (int j = 0; j < cog; j++) {
                                    int o = (i / cig) * cog + j;
                                    float wv = nhwc
                                            ? w[((ky * c.k + kx) * c.ci + i) * cog + j]
                                            : w[((i * cog + j) * c.k + ky) * c.k + kx];
                                    int at = nhwc
                                            ? ((n * oh + oy) * ow + ox) * c.co + o
                                            : ((n * c.co + o) * oh + oy) * ow + ox;
                                    acc[at] += v * wv;
                                }
                            }
                    }
        float[] r = new float[acc.length];
        for (int i = 0; i < r.length; i++) r[i] = (float) acc[i];
        return r;
    }
}
