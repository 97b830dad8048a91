package dev.kiln.bench.suite;

import static dev.kiln.bench.suite.DnnlMemory.any;
import static dev.kiln.bench.suite.DnnlMemory.channelsLast;
import static dev.kiln.bench.suite.DnnlMemory.rowMajor;
import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE;
import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_BIAS;
import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_DST;
import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_SRC;
import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_SRC_1;
import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_WEIGHTS;

import dev.kiln.runtime.NDArray;
import java.util.Map;
import org.bytedeco.dnnl.IntMemoryMap;
import org.bytedeco.dnnl.convolution_forward;
import org.bytedeco.dnnl.deconvolution_forward;
import org.bytedeco.dnnl.dnnl_version_t;
import org.bytedeco.dnnl.engine;
import org.bytedeco.dnnl.global.dnnl;
import org.bytedeco.dnnl.matmul;
import org.bytedeco.dnnl.memory;
import org.bytedeco.dnnl.post_ops;
import org.bytedeco.dnnl.primitive;
import org.bytedeco.dnnl.primitive_attr;
import org.bytedeco.dnnl.primitive_desc;
import org.bytedeco.dnnl.softmax_forward;
import org.bytedeco.dnnl.stream;

/**
 * oneDNN (org.bytedeco dnnl 3.11, the C++ API) on the suite's operators, as a performance engineer
 * uses it for inference: each primitive is created with {@code format_tag::any} for its source,
 * weights and destination so it picks its own (blocked) layouts; the inputs are reordered into
 * those once, outside the timing, as weights are in a deployed model; the timed call is the
 * primitive alone; the destination is reordered back to Kiln's layout only for the check. Convs
 * (1-D, 2-D, 3-D, grouped, dilated, depthwise as groups = C) are {@code convolution_forward}
 * (ConvLayer with bias and post-ops mul, add, relu), T2D {@code deconvolution_forward}, GMM
 * {@code matmul}, SFM {@code softmax_forward}; NRM and TBS take two primitives ({@link DnnlChain}). oneDNN has no
 * capsule conv. The kernel column is the primitive's {@code impl_info_str}. Threads: OpenMP's,
 * from OMP_NUM_THREADS, set per child process.
 */
final class DnnlOps implements Baseline {
    private final engine eng;
    private final stream strm;

    DnnlOps() {
        try {
            eng = new engine(engine.kind.cpu, 0);
            strm = new stream(eng);
        } catch (Throwable e) {
            throw new IllegalStateException(
                    "oneDNN (org.bytedeco:dnnl 3.11-1.5.13, linux-x86_64) cannot be loaded: " + e, e);
        }
    }

    @Override
    public String name() {
        return "onednn";
    }

    @Override
    public String describe() {
        dnnl_version_t v = dnnl.dnnl_version();
        return "oneDNN " + v.major() + "." + v.minor() + "." + v.patch() + " ("
                + v.hash().getString() + "), CPU runtime "
                + switch (dnnl.DNNL_CPU_RUNTIME) {
                    case 1 -> "sequential";
                    case 2 -> "OpenMP";
                    case 4 -> "TBB";
                    case 8 -> "threadpool";
                    default -> String.valueOf(dnnl.DNNL_CPU_RUNTIME);
                }
                + ", effective ISA " + dnnl.get_effective_cpu_isa() + ", OMP_NUM_THREADS="
                + System.getenv("OMP_NUM_THREADS");
    }

    @Override
    public Prepared prepare(SuiteWorkload w, Map<String, NDArray> in, long[] outDims) {
        return switch (w.op()) {
            case "C1D" -> conv(w, in, outDims, 1, 1, 1, w.p(5), w.p(6), false);
            case "C2D" -> conv(w, in, outDims, 2, 1, 1, w.p(6), w.p(7), false);
            case "GRP" -> conv(w, in, outDims, 2, 4, 1, w.p(6), w.p(7), false);
            case "DIL" -> conv(w, in, outDims, 2, 1, 2, w.p(6), w.p(7), false);
            case "DEP" -> conv(w, in, outDims, 2, w.p(3), 1, w.p(5), w.p(6), false);
            case "C3D" -> conv(w, in, outDims, 3, 1, 1, w.p(7), w.p(8), false);
            case "ConvLayer" -> conv(w, in, outDims, 2, 1, 1, w.p(6), w.p(7), true);
            case "T2D" -> deconv(w, in, outDims);
            case "GMM" -> {
                long b = w.p(0), n = w.p(1), m = w.p(2), k = w.p(3);
                matmul.primitive_desc pd = new matmul.primitive_desc(eng, any(b, n, k), any(b, k, m), any(b, n, m));
                yield new Run(
                        pd,
                        new primitive(pd),
                        args(
                                DNNL_ARG_SRC,
                                load(in.get("X"), rowMajor(b, n, k), pd.src_desc()),
                                DNNL_ARG_WEIGHTS,
                                load(in.get("Y"), rowMajor(b, k, m), pd.weights_desc())),
                        rowMajor(b, n, m),
                        outDims);
            }
            case "NRM" -> DnnlChain.norm(eng, strm, w, in, outDims);
            case "SFM" -> {
                memory.desc md = rowMajor(w.p(0), w.p(1));
                softmax_forward.primitive_desc pd = new softmax_forward.primitive_desc(
                        eng, dnnl.prop_kind.forward_inference, dnnl.algorithm.softmax_accurate, md, md, 1);
                yield new Run(
                        pd, new primitive(pd), args(DNNL_ARG_SRC, load(in.get("A"), md, pd.src_desc())), md, outDims);
            }
            case "TBS" -> DnnlChain.attention(eng, strm, w, in, outDims);
            case "CAP" -> throw new Unsupported("oneDNN has no capsule convolution");
            default -> throw new Unsupported("oneDNN: no translation of " + w.op());
        };
    }

    /**
     * A convolution of spatial rank {@code r}: Kiln's data [N, S..., CI], weight [K..., CI/groups,
     * CO] (depthwise: [K, K, C, 1]), output [N, OS..., CO].
     */
    private Prepared conv(
            SuiteWorkload w,
            Map<String, NDArray> in,
            long[] outDims,
            int r,
            long groups,
            long dilation,
            long stride,
            long pad,
            boolean layer) {
        long[] dataDims = in.get("data").shape();
        long[] kilnW = in.get("weight").shape();
        boolean depthwise = w.op().equals("DEP");
        long ci = dataDims[r + 1];
        long co = depthwise ? ci : kilnW[r + 1];
        long[] src = nc(dataDims), dst = nc(outDims);
        long[] k = java.util.Arrays.copyOf(kilnW, r);
        long[] wDims;
        long[] wStrides;
        // Kiln's weight index: ((k0 * K1 + k1) ... ) * I * O + i * O + o, with I = CI/groups (1 for depthwise) and O =
        // CO (depthwise: C * 1)
        long io = (depthwise ? ci : kilnW[r] * co);
        long[] kStrides = new long[r];
        for (int i = r - 1; i >= 0; i--) kStrides[i] = (i == r - 1 ? io : kStrides[i + 1] * k[i + 1]);
        if (groups == 1) {
            wDims = concat(new long[] {co, ci}, k);
            wStrides = concat(new long[] {1, co}, kStrides);
        } else if (depthwise) {
            wDims = concat(new long[] {groups, 1, 1}, k);
            wStrides = concat(new long[] {1, 1, 1}, kStrides);
        } else {
            wDims = concat(new long[] {groups, co / groups, ci / groups}, k);
            wStrides = concat(new long[] {co / groups, 1, co}, kStrides);
        }
        long[] strides = fill(r, stride), dil = fill(r, dilation - 1), padL = fill(r, pad), padR = new long[r];
        for (int i = 0; i < r; i++) {
            long ext = (k[i] - 1) * dilation + 1;
            padR[i] = (dst[i + 2] - 1) * stride + ext - src[i + 2] - pad;
        }
        primitive_attr attr = new primitive_attr();
        memory.desc perChannel = rowMajor(concat(new long[] {1, co}, fill(r, 1)));
        if (layer) {
            post_ops po = new post_ops();
            po.append_binary(dnnl.algorithm.binary_mul, perChannel);
            po.append_binary(dnnl.algorithm.binary_add, perChannel);
            po.append_eltwise(dnnl.algorithm.eltwise_relu, 0f, 0f);
            attr.set_post_ops(po);
        }
        memory.desc anyW = any(wDims);
        convolution_forward.primitive_desc pd = layer
                ? new convolution_forward.primitive_desc(
                        eng,
                        dnnl.prop_kind.forward_inference,
                        dnnl.algorithm.convolution_direct,
                        any(src),
                        anyW,
                        rowMajor(co),
                        any(dst),
                        strides,
                        dil,
                        padL,
                        padR,
                        attr,
                        false)
                : new convolution_forward.primitive_desc(
                        eng,
                        dnnl.prop_kind.forward_inference,
                        dnnl.algorithm.convolution_direct,
                        any(src),
                        anyW,
                        any(dst),
                        strides,
                        dil,
                        padL,
                        padR,
                        attr,
                        false);
        IntMemoryMap args = args(
                DNNL_ARG_SRC,
                load(in.get("data"), channelsLast(src), pd.src_desc()),
                DNNL_ARG_WEIGHTS,
                load(in.get("weight"), new memory.desc(wDims, DnnlMemory.F32, wStrides), pd.weights_desc()));
        if (layer) {
            args.put(DNNL_ARG_BIAS, load(in.get("bias"), rowMajor(co), pd.bias_desc()));
            args.put(
                    DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE | DNNL_ARG_SRC_1,
                    DnnlMemory.wrap(perChannel, eng, in.get("bn_scale")));
            args.put(
                    DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE * 2 | DNNL_ARG_SRC_1,
                    DnnlMemory.wrap(perChannel, eng, in.get("bn_offset")));
        }
        return new Run(pd, new primitive(pd), args, channelsLast(dst), outDims);
    }

    /**
     * T2D: Kiln's data [N, H, W, CI], weight [K, K, CI, CO], output [N, OH, OW, CO]; oneDNN's weights are [CO, CI, K,
     * K].
     */
    private Prepared deconv(SuiteWorkload w, Map<String, NDArray> in, long[] outDims) {
        long[] src = nc(in.get("data").shape()), dst = nc(outDims);
        long kk = w.p(5), s = w.p(6), p = w.p(7), ci = w.p(3), co = w.p(4);
        long[] wDims = {co, ci, kk, kk};
        long[] wStrides = {1, co, kk * ci * co, ci * co};
        long[] padR = {(src[2] - 1) * s - p + kk - dst[2], (src[3] - 1) * s - p + kk - dst[3]};
        deconvolution_forward.primitive_desc pd = new deconvolution_forward.primitive_desc(
                eng,
                dnnl.prop_kind.forward_inference,
                dnnl.algorithm.deconvolution_direct,
                any(src),
                any(wDims),
                any(dst),
                new long[] {s, s},
                new long[] {0, 0},
                new long[] {p, p},
                padR,
                new primitive_attr(),
                false);
        IntMemoryMap args = args(
                DNNL_ARG_SRC,
                load(in.get("data"), channelsLast(src), pd.src_desc()),
                DNNL_ARG_WEIGHTS,
                load(in.get("weight"), new memory.desc(wDims, DnnlMemory.F32, wStrides), pd.weights_desc()));
        return new Run(pd, new primitive(pd), args, channelsLast(dst), outDims);
    }

    /** Kiln's array in {@code user} layout, reordered into the primitive's {@code want} once. */
    private memory load(NDArray a, memory.desc user, memory.desc want) {
        return DnnlMemory.reorderTo(DnnlMemory.wrap(user, eng, a), want, eng, strm);
    }

    private static IntMemoryMap args(Object... kv) {
        IntMemoryMap m = new IntMemoryMap();
        for (int i = 0; i < kv.length; i += 2) m.put((Integer) kv[i], (memory) kv[i + 1]);
        return m;
    }

    /** Kiln's channels-last dims [N, S..., C] as oneDNN's [N, C, S...]. */
    private static long[] nc(long[] nsc) {
        long[] d = new long[nsc.length];
        d[0] = nsc[0];
        d[1] = nsc[nsc.length - 1];
        System.arraycopy(nsc, 1, d, 2, nsc.length - 2);
        return d;
    }

    private static long[] fill(int n, long v) {
        long[] a = new long[n];
        java.util.Arrays.fill(a, v);
        return a;
    }

    private static long[] concat(long[] a, long[] b) {
        long[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    /**
     * A primitive with its arguments; the destination is the primitive's own memory, reordered to {@code userDst} on
     * output.
     */
    final class Run implements Prepared {
        private final primitive_desc pd;
        private final primitive prim;
        private final IntMemoryMap args;
        private final memory dst;
        private final memory.desc userDst;
        private final long[] outDims;

        Run(primitive_desc pd, primitive prim, IntMemoryMap args, memory.desc userDst, long[] outDims) {
            this.pd = pd;
            this.prim = prim;
            this.args = args;
            this.dst = new memory(pd.dst_desc(), eng);
            args.put(DNNL_ARG_DST, dst);
            this.userDst = userDst;
            this.outDims = outDims;
        }

        @Override
        public void run() {
            prim.execute(strm, args);
            strm._wait();
        }

        @Override
        public NDArray output() {
            NDArray out = NDArray.allocate(dev.kiln.ir.DType.FLOAT32, outDims);
            DnnlMemory.copy(dst, DnnlMemory.wrap(userDst, eng, out), strm);
            return out;
        }

        @Override
        public String kernel() {
            return pd.impl_info_str().getString();
        }

        @Override
        public void close() {
            prim.close();
            pd.close();
        }
    }
}
