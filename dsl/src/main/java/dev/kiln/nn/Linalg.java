package dev.kiln.nn;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Literals;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * Linear algebra: matrix multiply with either operand transposed, batch matmul (Ansor's GMM),
 * dense (a fully connected layer, weights stored {@code [units, K]}), and the per-batch
 * Frobenius norm (Ansor's NRM, {@code norm_bmn}).
 *
 * <p>Operands must share a dtype. An output dtype wider than the inputs' (int8 to int32,
 * float16 to float32) casts each operand before the multiply, so the sum accumulates in the
 * output type. The reduce axis is named {@code k}.
 */
public final class Linalg {
    private Linalg() {}

    /** {@code C[i, j] = sum_k A[i, k] * B[k, j]} for {@code A [M, K]} and {@code B [K, N]}. */
    @Operator("`C[i, j] = sum_k A[i, k] * B[k, j]`, either operand optionally transposed.")
    public static Tensor matmul(Tensor a, Tensor b) {
        return matmul(a, b, false, false);
    }

    /**
     * Matrix multiply {@code C [M, N]}. {@code A} is {@code [M, K]}, or {@code [K, M]} if
     * {@code transposeA}; {@code B} is {@code [K, N]}, or {@code [N, K]} if {@code transposeB}.
     */
    public static Tensor matmul(Tensor a, Tensor b, boolean transposeA, boolean transposeB) {
        return matmul(a, b, transposeA, transposeB, a == null ? null : a.dtype());
    }

    /** Matrix multiply accumulating in {@code outDtype} (see the class comment). */
    public static Tensor matmul(Tensor a, Tensor b, boolean transposeA, boolean transposeB, DType outDtype) {
        String op = "matmul";
        checkOperands(op, a, b, outDtype);
        Axes.requireRank(op, a, 2);
        Axes.requireRank(op, b, 2);
        int aK = transposeA ? 0 : 1;
        int bK = transposeB ? 1 : 0;
        long k = checkK(op, a, aK, b, bK);
        long m = a.dim(1 - aK);
        long n = b.dim(1 - bK);
        return Te.computeN(op, "matmul", Shape.of(m, n), idx -> {
            IterVar r = Te.reduceAxis(k, "k");
            IterVar i = idx.get(0), j = idx.get(1);
            Expr av = transposeA ? a.at(r, i) : a.at(i, r);
            Expr bv = transposeB ? b.at(j, r) : b.at(r, j);
            return Te.sum(r, av.cast(outDtype).mul(bv.cast(outDtype)));
        });
    }

    /** {@code Z[b, i, j] = sum_k X[b, i, k] * Y[b, k, j]}. */
    @Operator("`Z[b, i, j] = sum_k X[b, i, k] * Y[b, k, j]`, either operand optionally transposed.")
    public static Tensor batchMatmul(Tensor x, Tensor y) {
        return batchMatmul(x, y, false, false);
    }

    /**
     * Batch matmul {@code Z [B, N, M]}: {@code X} is {@code [B, N, K]} (or {@code [B, K, N]} if
     * {@code transposeX}), {@code Y} is {@code [B, K, M]} (or {@code [B, M, K]} if
     * {@code transposeY}). One operand may have batch 1, which is broadcast over the other's batch.
     */
    public static Tensor batchMatmul(Tensor x, Tensor y, boolean transposeX, boolean transposeY) {
        return batchMatmul(x, y, transposeX, transposeY, x == null ? null : x.dtype());
    }

    /** Batch matmul accumulating in {@code outDtype} (see the class comment). */
    public static Tensor batchMatmul(Tensor x, Tensor y, boolean transposeX, boolean transposeY, DType outDtype) {
        String op = "batch_matmul";
        checkOperands(op, x, y, outDtype);
        Axes.requireRank(op, x, 3);
        Axes.requireRank(op, y, 3);
        long bx = x.dim(0), by = y.dim(0);
        if (bx != by && bx != 1 && by != 1) {
            throw new KilnException(op + ": batch mismatch: axis 0 of tensor " + Axes.describe(x) + " has extent " + bx
                    + " but axis 0 of tensor " + Axes.describe(y) + " has extent " + by + " (they must be equal or 1)");
        }
        int xK = transposeX ? 1 : 2;
        int yK = transposeY ? 2 : 1;
        long k = checkK(op, x, xK, y, yK);
        long n = x.dim(3 - xK);
        long m = y.dim(3 - yK);
        return Te.computeN(op, "batch_matmul", Shape.of(Math.max(bx, by), n, m), idx -> {
            IterVar r = Te.reduceAxis(k, "k");
            IterVar b = idx.get(0), i = idx.get(1), j = idx.get(2);
            Expr xb = bx == 1 ? Literals.like(b, 0L) : b;
            Expr yb = by == 1 ? Literals.like(b, 0L) : b;
            Expr xv = transposeX ? x.at(xb, r, i) : x.at(xb, i, r);
            Expr yv = transposeY ? y.at(yb, j, r) : y.at(yb, r, j);
            return Te.sum(r, xv.cast(outDtype).mul(yv.cast(outDtype)));
        });
    }

    /** {@code out[n, u] = sum_k x[n, k] * w[u, k]} for {@code x [N, K]} and {@code w [units, K]}. */
    @Operator("`out[n, u] = sum_k x[n, k] * w[u, k]` (+ bias[u]) for x [N, K] and w [units, K].")
    public static Tensor dense(Tensor x, Tensor w) {
        return dense(x, w, null);
    }

    /** Dense with a bias {@code [units]} added, or none if {@code bias} is null. */
    public static Tensor dense(Tensor x, Tensor w, Tensor bias) {
        return dense(x, w, bias, x == null ? null : x.dtype());
    }

    /**
     * Dense accumulating in {@code outDtype}; the bias (if any) must have that dtype. With a bias
     * there are two stages: {@code dense_matmul} (the reduction) and {@code dense} (the add).
     */
    public static Tensor dense(Tensor x, Tensor w, Tensor bias, DType outDtype) {
        String op = "dense";
        checkOperands(op, x, w, outDtype);
        Axes.requireRank(op, x, 2);
        Axes.requireRank(op, w, 2);
        long k = checkK(op, x, 1, w, 1);
        long n = x.dim(0), units = w.dim(0);
        if (bias != null) {
            if (bias.rank() != 1 || bias.dim(0) != units) {
                throw new KilnException(op + ": bias tensor " + Axes.describe(bias) + " must have shape [" + units
                        + "] to match axis 0 (units) of weight tensor " + Axes.describe(w));
            }
            if (bias.dtype() != outDtype) {
                throw new KilnException(op + ": bias tensor " + Axes.describe(bias) + " is " + bias.dtype()
                        + " but the output dtype is " + outDtype);
            }
        }
        Tensor mm = Te.computeN(bias == null ? op : "dense_matmul", "dense", Shape.of(n, units), idx -> {
            IterVar r = Te.reduceAxis(k, "k");
            return Te.sum(
                    r,
                    x.at(idx.get(0), r).cast(outDtype).mul(w.at(idx.get(1), r).cast(outDtype)));
        });
        if (bias == null) return mm;
        return Te.computeN(op, Elementwise.TAG, mm.shape(), idx -> mm.at(idx).add(bias.at(idx.get(1))));
    }

    /**
     * The Frobenius norm of each matrix of a batch (Ansor's NRM): for {@code A [B, M, N]},
     * {@code C[b] = sqrt(sum_{i,j} A[b, i, j]^2)}. Tensors of higher rank have several batch axes
     * (every axis but the last two). Two stages: {@code norm_sumsq} (the reduction), then
     * {@code norm} (the square root). Floating types only.
     */
    @Operator("The Frobenius norm of each matrix of a batch (Ansor's NRM): `C[b] = sqrt(sum_ij A[b, i, j]^2)`.")
    public static Tensor norm(Tensor a) {
        String op = "norm";
        Axes.requireNonNull(op, "input", a);
        Axes.requireMinRank(op, a, 3);
        Axes.requireFloat(op, a);
        int r = a.rank();
        List<Long> batch = new ArrayList<>(a.shape().dims().subList(0, r - 2));
        Shape out = new Shape(batch);
        Tensor sumsq = Te.computeN("norm_sumsq", "norm", out, idx -> {
            IterVar i = Te.reduceAxis(a.dim(r - 2), "i");
            IterVar j = Te.reduceAxis(a.dim(r - 1), "j");
            List<Expr> in = new ArrayList<>(idx);
            in.add(i);
            in.add(j);
            Expr v = a.at(in);
            return Te.sum(List.of(i, j), v.mul(v));
        });
        return Te.computeN(op, "elemwise", out, idx -> Te.sqrt(sumsq.at(idx)));
    }

    private static void checkOperands(String op, Tensor a, Tensor b, DType outDtype) {
        Axes.requireNonNull(op, "first", a);
        Axes.requireNonNull(op, "second", b);
        Axes.requireNumeric(op, a);
        Axes.requireSameDType(op, a, b);
        if (outDtype == null) throw new KilnException(op + ": the output dtype is null");
        DType in = a.dtype();
        boolean sameFamily = in.isFloat() == outDtype.isFloat() && outDtype.isNumeric();
        boolean signOk = !outDtype.isUnsigned() || in.isUnsigned();
        boolean wideEnough = outDtype.bits() >= in.bits();
        if (!sameFamily || !signOk || !wideEnough) {
            throw new KilnException(op + ": cannot accumulate " + in + " tensors " + Axes.describe(a) + " and "
                    + Axes.describe(b) + " in " + outDtype + "; the output dtype must be a type of the same "
                    + "family at least as wide (e.g. int8 -> int32, float16 -> float32)");
        }
    }

    private static long checkK(String op, Tensor a, int aAxis, Tensor b, int bAxis) {
        if (a.dim(aAxis) != b.dim(bAxis)) {
            throw new KilnException(op + ": reduction extent (K) mismatch: axis " + aAxis + " of tensor "
                    + Axes.describe(a) + " has extent " + a.dim(aAxis) + " but axis " + bAxis + " of tensor "
                    + Axes.describe(b) + " has extent " + b.dim(bAxis));
        }
        return a.dim(aAxis);
    }
}
