package dev.kiln.nn;

import static dev.kiln.te.Te.f32;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.select;
import static dev.kiln.te.Te.sum;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * 3x3, stride-1 NHWC convolutions by Winograd's minimal filtering F(m x m, 3 x 3) (Lavin and Gray, 2015), as TVM's
 * {@code conv2d_winograd_nhwc}: the output is cut into m x m tiles, each computed from an alpha x alpha input tile
 * (alpha = m + 2) with alpha^2 multiplications per channel pair instead of 9 m^2. Four stages:
 *
 * <pre>
 * pad            the data, padded so that the tiles cover the output
 * data_pack      V[eps, nu, p, c]  = sum_{a, b} B[a, eps] B[b, nu] tile_p[a, b, c]            (input transform)
 * bgemm          M[eps, nu, p, k]  = sum_c V[eps, nu, p, c] U[eps, nu, c, k]                   (alpha^2 GEMMs)
 * inverse        Y[i, j, p, k]     = sum_{a, b} A[a, i] A[b, j] M[a, b, p, k]                  (output transform)
 * conv2d_winograd_nhwc  out[n, h, w, k] = Y[h mod m, w mod m, tile of (n, h, w), k]
 * </pre>
 *
 * <p>{@code U} is the transformed weight {@code G g G^T}, [alpha, alpha, CI, CO]: {@link #transformWeight(float[],
 * int, int, int)} computes it from HWIO weights once (a constant weight is transformed when the model is built, as
 * TVM's AlterOpLayout does); {@link #transformWeight(Tensor, int)} is the same as a compute stage. The constant
 * matrices B and A are written into the transforms as selects on their indices, and each sum runs only over their
 * non-zero entries (its condition): where the schedule unrolls those loops (the sketch rule for these stages,
 * {@link #unrolledAxes}, as Ansor's SimplifyComputeWithConstTensor) every select and condition folds to a constant and
 * each transform is a few additions per element. B and A hold small integers, exact in float32; G's fractions only
 * enter the weight transform. The results equal the direct convolution's up to float32 rounding: m = 2 within a few
 * ulps, m = 4 within about 1e-5 relative on unit-scale data (its transforms scale terms by up to 25).
 */
public final class Winograd {
    /** The tag of the input transform stage. */
    public static final String DATA_PACK = "winograd_data_pack";
    /** The tag of the output transform stage. */
    public static final String INVERSE = "winograd_inverse";
    /** The tag of the batched GEMM stage. */
    public static final String BGEMM = "winograd_bgemm";
    /** The tag of the output stage (the convolution's result). */
    public static final String OUTPUT = "conv2d_winograd_nhwc";

    private static final Set<String> UNROLLED = Set.of("eps", "nu", "r_a", "r_b", "vh", "vw");

    private Winograd() {}

    /** The transform matrices of F(m x m, 3 x 3): {@code at} (m x alpha), {@code g} (alpha x 3), {@code bt}. */
    public record Matrices(int m, double[][] at, double[][] g, double[][] bt) {
        public int alpha() {
            return m + 2;
        }
    }

    /** The matrices of F(m x m, 3 x 3) for m = 2 (points 0, 1, -1) or 4 (0, 1, -1, 2, -2), each with infinity. */
    public static Matrices matrices(int m) {
        return switch (m) {
            case 2 ->
                new Matrices(
                        2,
                        new double[][] {{1, 1, 1, 0}, {0, 1, -1, -1}},
                        new double[][] {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
                        new double[][] {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}});
            case 4 ->
                new Matrices(
                        4,
                        new double[][] {
                            {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}
                        },
                        new double[][] {
                            {1.0 / 4, 0, 0},
                            {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                            {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                            {1.0 / 24, 1.0 / 12, 1.0 / 6},
                            {1.0 / 24, -1.0 / 12, 1.0 / 6},
                            {0, 0, 1}
                        },
                        new double[][] {
                            {4, 0, -5, 0, 1, 0},
                            {0, -4, -4, 1, 1, 0},
                            {0, 4, -4, -1, 1, 0},
                            {0, -2, -1, 2, 1, 0},
                            {0, 2, -1, -2, 1, 0},
                            {0, 4, 0, -5, 0, 1}
                        });
            default -> throw new KilnException("winograd: tile size m must be 2 or 4, got " + m);
        };
    }

    /**
     * The names of {@code op}'s loops that index the constant matrices, which a schedule should unroll so that they
     * fold away: empty for any stage but the input and output transforms.
     */
    public static List<String> unrolledAxes(ComputeOp op) {
        if (!op.tag().equals(DATA_PACK) && !op.tag().equals(INVERSE)) return List.of();
        List<String> out = new ArrayList<>();
        for (IterVar a : op.axes()) if (UNROLLED.contains(a.name())) out.add(a.name());
        for (IterVar a : op.reduceAxes()) if (UNROLLED.contains(a.name())) out.add(a.name());
        return out;
    }

    /**
     * A 3x3, stride-1, dilation-1 NHWC convolution with HWIO weights [3, 3, CI, CO] by F(m x m, 3 x 3), the weight
     * transform a stage of its own ({@link #transformWeight(Tensor, int)}).
     */
    @Operator("3x3 stride-1 NHWC conv2d by Winograd F(m x m, 3 x 3), m = 2 or 4; weight HWIO, transformed in a stage.")
    public static Tensor conv2dNhwc(Tensor data, Tensor weightHwio, int m, ConvParams p) {
        return conv2dNhwcTransformed(data, transformWeight(weightHwio, m), m, p);
    }

    /**
     * A 3x3, stride-1, dilation-1 NHWC convolution by F(m x m, 3 x 3) with the weight already transformed:
     * {@code u} = [alpha, alpha, CI, CO] (TVM's conv2d_winograd_nhwc_without_weight_transform). Padding any.
     */
    @Operator("3x3 stride-1 NHWC conv2d by Winograd F(m x m, 3 x 3) with a transformed weight [m+2, m+2, CI, CO].")
    public static Tensor conv2dNhwcTransformed(Tensor data, Tensor u, int m, ConvParams p) {
        Matrices mat = matrices(m);
        int alpha = mat.alpha();
        String name = "conv2d_winograd_nhwc";
        if (data.rank() != 4) throw new KilnException(name + ": data '" + data.name() + "' must be NHWC (rank 4)");
        if (u.rank() != 4 || u.dim(0) != alpha || u.dim(1) != alpha || u.dim(2) != data.dim(3)) {
            throw new KilnException(name + ": the transformed weight '" + u.name() + "' must be [" + alpha + ", "
                    + alpha + ", " + data.dim(3) + ", CO] for F(" + m + "x" + m + ", 3x3) on " + data.dim(3)
                    + " input channels, got " + u.shape());
        }
        ConvChecks.requireSameDType(name, data, u);
        if (data.dtype() != DType.FLOAT32) {
            throw new KilnException(name + ": data '" + data.name() + "' is " + data.dtype() + "; only float32");
        }
        if (p.spatialRank() != 2 || p.groups() != 1) {
            throw new KilnException(name + ": needs 2 spatial axes and one group, got " + p);
        }
        for (int i = 0; i < 2; i++) {
            if (p.strides().get(i) != 1 || p.dilations().get(i) != 1) {
                throw new KilnException(name + ": stride and dilation must be 1 on axis " + (i + 1) + ", got "
                        + p.strides() + ", " + p.dilations());
            }
        }
        long n = data.dim(0), h = data.dim(1), w = data.dim(2), ci = data.dim(3), co = u.dim(3);
        long oh = h + p.padBefore().get(0) + p.padAfter().get(0) - 2;
        long ow = w + p.padBefore().get(1) + p.padAfter().get(1) - 2;
        if (oh < 1 || ow < 1) {
            throw new KilnException(name + ": data '" + data.name() + "' " + data.shape() + " with padding "
                    + p.padBefore() + p.padAfter() + " is smaller than the 3x3 window");
        }
        long th = (oh + m - 1) / m, tw = (ow + m - 1) / m, tiles = n * th * tw;
        // padded so that every tile's alpha x alpha window lies inside: th * m + 2 rows
        Tensor padded =
                Pad.pad(data, new long[] {0, p.padBefore().get(0), p.padBefore().get(1), 0}, new long[] {
                    0,
                    th * m + 2 - h - p.padBefore().get(0),
                    tw * m + 2 - w - p.padBefore().get(1),
                    0
                });
        double[][] b = transpose(mat.bt());
        double[][] a = transpose(mat.at());
        Tensor v = Te.computeN(
                "data_pack", DATA_PACK, Shape.of(alpha, alpha, tiles, ci), Te.names("eps", "nu", "p", "c"), ix -> {
                    IterVar ra = reduceAxis(alpha, "r_a"), rb = reduceAxis(alpha, "r_b");
                    Expr eps = ix.get(0), nu = ix.get(1), t = ix.get(2), c = ix.get(3);
                    Expr row = t.floordiv(tw).floormod(th).mul(m).add(ra);
                    Expr col = t.floormod(tw).mul(m).add(rb);
                    Expr read = padded.at(t.floordiv(th * tw), row, col, c);
                    return sum(
                            List.of(ra, rb),
                            read.mul(entry(b, ra, eps)).mul(entry(b, rb, nu)),
                            nonZero(b, ra, eps).and(nonZero(b, rb, nu)));
                });
        Tensor mm =
                Te.computeN("bgemm", BGEMM, Shape.of(alpha, alpha, tiles, co), Te.names("eps", "nu", "p", "k"), ix -> {
                    IterVar rc = reduceAxis(ci, "rc");
                    return sum(
                            rc,
                            v.at(ix.get(0), ix.get(1), ix.get(2), rc).mul(u.at(ix.get(0), ix.get(1), rc, ix.get(3))));
                });
        Tensor y = Te.computeN("inverse", INVERSE, Shape.of(m, m, tiles, co), Te.names("vh", "vw", "p", "k"), ix -> {
            IterVar ra = reduceAxis(alpha, "r_a"), rb = reduceAxis(alpha, "r_b");
            Expr vh = ix.get(0), vw = ix.get(1);
            return sum(
                    List.of(ra, rb),
                    mm.at(ra, rb, ix.get(2), ix.get(3)).mul(entry(a, ra, vh)).mul(entry(a, rb, vw)),
                    nonZero(a, ra, vh).and(nonZero(a, rb, vw)));
        });
        return Te.computeN(name, OUTPUT, Shape.of(n, oh, ow, co), Te.names("n", "h", "w", "k"), ix -> {
            Expr tile = ix.get(0)
                    .mul(th * tw)
                    .add(ix.get(1).floordiv(m).mul(tw))
                    .add(ix.get(2).floordiv(m));
            return y.at(ix.get(1).floormod(m), ix.get(2).floormod(m), tile, ix.get(3));
        });
    }

    /** The weight transform {@code U = G g G^T} as a stage: HWIO [3, 3, CI, CO] -> [alpha, alpha, CI, CO]. */
    @Operator("Winograd's weight transform G g G^T: HWIO [3, 3, CI, CO] -> [m+2, m+2, CI, CO].")
    public static Tensor transformWeight(Tensor weightHwio, int m) {
        Matrices mat = matrices(m);
        if (weightHwio.rank() != 4 || weightHwio.dim(0) != 3 || weightHwio.dim(1) != 3) {
            throw new KilnException("winograd: weight '" + weightHwio.name() + "' must be HWIO [3, 3, CI, CO], got "
                    + weightHwio.shape());
        }
        int alpha = mat.alpha();
        return Te.computeN(
                "weight_transform",
                "winograd_weight_transform",
                Shape.of(alpha, alpha, weightHwio.dim(2), weightHwio.dim(3)),
                Te.names("eps", "nu", "ci", "co"),
                ix -> {
                    IterVar r = reduceAxis(3, "r_kh"), s = reduceAxis(3, "r_kw");
                    return sum(
                            List.of(r, s),
                            weightHwio
                                    .at(r, s, ix.get(2), ix.get(3))
                                    .mul(entry(mat.g(), ix.get(0), r))
                                    .mul(entry(mat.g(), ix.get(1), s)));
                });
    }

    /**
     * The weight transform in plain Java (sums in double, rounded once): HWIO [3, 3, ci, co] -> [alpha, alpha, ci,
     * co], row-major.
     */
    public static float[] transformWeight(float[] hwio, int ci, int co, int m) {
        Matrices mat = matrices(m);
        int alpha = mat.alpha();
        if (hwio.length != 9L * ci * co) {
            throw new KilnException("winograd: an HWIO weight of [3, 3, " + ci + ", " + co + "] has " + 9L * ci * co
                    + " values, got " + hwio.length);
        }
        double[][] g = mat.g();
        float[] out = new float[alpha * alpha * ci * co];
        for (int e = 0; e < alpha; e++) {
            for (int v = 0; v < alpha; v++) {
                for (int i = 0; i < ci; i++) {
                    for (int o = 0; o < co; o++) {
                        double acc = 0;
                        for (int r = 0; r < 3; r++) {
                            for (int s = 0; s < 3; s++) {
                                acc += g[e][r] * g[v][s] * hwio[((r * 3 + s) * ci + i) * co + o];
                            }
                        }
                        out[((e * alpha + v) * ci + i) * co + o] = (float) acc;
                    }
                }
            }
        }
        return out;
    }

    /** {@code mat[i][j]} as a float32 select on the two indices (0 where the entry is 0). */
    private static Expr entry(double[][] mat, Expr i, Expr j) {
        Expr out = f32(0);
        for (int r = mat.length - 1; r >= 0; r--) {
            Expr row = f32(0);
            for (int c = mat[r].length - 1; c >= 0; c--) {
                if (mat[r][c] != 0) row = select(j.eq(c), f32(mat[r][c]), row);
            }
            out = select(i.eq(r), row, out);
        }
        return out;
    }

    /** Whether {@code mat[i][j]} is non-zero, as a condition on the two indices. */
    private static Expr nonZero(double[][] mat, Expr i, Expr j) {
        Expr out = null;
        for (int r = 0; r < mat.length; r++) {
            Expr cols = null;
            for (int c = 0; c < mat[r].length; c++) {
                if (mat[r][c] != 0) cols = cols == null ? j.eq(c) : cols.or(j.eq(c));
            }
            if (cols == null) continue;
            Expr term = i.eq(r).and(cols);
            out = out == null ? term : out.or(term);
        }
        return out;
    }

    private static double[][] transpose(double[][] x) {
        double[][] t = new double[x[0].length][x.length];
        for (int i = 0; i < x.length; i++) for (int j = 0; j < x[0].length; j++) t[j][i] = x[i][j];
        return t;
    }
}
