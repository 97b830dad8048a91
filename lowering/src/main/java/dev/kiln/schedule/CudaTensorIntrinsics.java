package dev.kiln.schedule;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;

/**
 * The Tensor Core intrinsics (CUDA {@code nvcuda::wmma}, one warp computes a 16 x 16 x 16 tile):
 * {@code C[i, j] += sum_k float32(A[i, k]) * float32(B[k, j])} with A and B float16 or bfloat16 and
 * C float32, B either {@code [k, j]} ("nn": matmul) or {@code [j, k]} ("nt": dense). Every operand
 * is strided (a fragment's leading dimension {@code ldm}: rows any fixed distance apart); the
 * tile's first element must be 32-byte aligned (16 elements of A and B, 8 of C) and so must the
 * leading dimension. They need compute capability 8.0 (bfloat16 fragments arrived with sm_80).
 *
 * <p>The TF32 ones take float32 A and B ({@code C[i, j] += sum_k A[i, k] * B[k, j]} over a
 * 16 x 16 x 8 tile): the Tensor Cores round each input to TF32 (a 10-bit significand, float16's
 * precision with float32's range) and sum in float32. The pattern is float32 arithmetic, so the
 * interpreter computes a tensorized program more exactly than the GPU does; a result is within
 * TF32's rounding of it. The search offers them only where the target allows TF32
 * ({@link dev.kiln.target.CudaTarget#tf32()}). The cuda module's code generator implements them
 * all under the same names.
 */
public final class CudaTensorIntrinsics {
    private CudaTensorIntrinsics() {}

    /** float16 x float16 -> float32, B {@code [k, j]}. */
    public static final String WMMA_F16_NN = "cuda.wmma.f16f32.16x16x16.nn";
    /** float16 x float16 -> float32, B {@code [j, k]}. */
    public static final String WMMA_F16_NT = "cuda.wmma.f16f32.16x16x16.nt";
    /** bfloat16 x bfloat16 -> float32, B {@code [k, j]}. */
    public static final String WMMA_BF16_NN = "cuda.wmma.bf16f32.16x16x16.nn";
    /** bfloat16 x bfloat16 -> float32, B {@code [j, k]}. */
    public static final String WMMA_BF16_NT = "cuda.wmma.bf16f32.16x16x16.nt";

    /** float32 inputs on TF32 Tensor Cores -> float32, 16 x 16 x 8, B {@code [k, j]}. */
    public static final String WMMA_TF32_NN = "cuda.wmma.tf32f32.16x16x8.nn";
    /** float32 inputs on TF32 Tensor Cores -> float32, 16 x 16 x 8, B {@code [j, k]}. */
    public static final String WMMA_TF32_NT = "cuda.wmma.tf32f32.16x16x8.nt";

    /** The compute capability every one of them needs. */
    public static final String MIN_ARCH = "sm_80";

    /** The tile size of m and n, and of k for float16 and bfloat16. */
    public static final int TILE = 16;

    /** The tile size of k for TF32. */
    public static final int TF32_K = 8;

    /** Every Tensor Core intrinsic's name. */
    public static final List<String> ALL =
            List.of(WMMA_F16_NN, WMMA_F16_NT, WMMA_BF16_NN, WMMA_BF16_NT, WMMA_TF32_NN, WMMA_TF32_NT);

    static void registerAll() {
        TensorIntrinsics.register(wmma(WMMA_F16_NN, DType.FLOAT16, false));
        TensorIntrinsics.register(wmma(WMMA_F16_NT, DType.FLOAT16, true));
        TensorIntrinsics.register(wmma(WMMA_BF16_NN, DType.BFLOAT16, false));
        TensorIntrinsics.register(wmma(WMMA_BF16_NT, DType.BFLOAT16, true));
        TensorIntrinsics.register(wmma(WMMA_TF32_NN, DType.FLOAT32, false));
        TensorIntrinsics.register(wmma(WMMA_TF32_NT, DType.FLOAT32, true));
    }

    /**
     * The intrinsic for inputs of {@code in} with B transposed ({@code [j, k]}) or not, or null for
     * another dtype: float32 inputs get the TF32 one.
     */
    public static String forInputs(DType in, boolean bTransposed) {
        return switch (in) {
            case FLOAT16 -> bTransposed ? WMMA_F16_NT : WMMA_F16_NN;
            case BFLOAT16 -> bTransposed ? WMMA_BF16_NT : WMMA_BF16_NN;
            case FLOAT32 -> bTransposed ? WMMA_TF32_NT : WMMA_TF32_NN;
            default -> null;
        };
    }

    /** The input dtype of intrinsic {@code name} (float32 for the TF32 ones). */
    public static DType inputType(String name) {
        if (name.contains(".f16")) return DType.FLOAT16;
        if (name.contains(".bf16")) return DType.BFLOAT16;
        if (name.contains(".tf32")) return DType.FLOAT32;
        throw new dev.kiln.ir.KilnException("'" + name + "' is not a Tensor Core intrinsic; they are " + ALL);
    }

    /** The depth of intrinsic {@code name}'s k tile: 16, or 8 for TF32. */
    public static int kTile(String name) {
        return inputType(name) == DType.FLOAT32 ? TF32_K : TILE;
    }

    /** Whether {@code name} is a Tensor Core intrinsic with B as {@code [j, k]}. */
    public static boolean bTransposed(String name) {
        return name.endsWith(".nt");
    }

    private static TensorIntrinsic wmma(String name, DType in, boolean bT) {
        int t = TILE;
        int kt = in == DType.FLOAT32 ? TF32_K : TILE;
        Tensor a = Te.placeholder("A", in, t, kt);
        Tensor b = bT ? Te.placeholder("B", in, t, kt) : Te.placeholder("B", in, kt, t);
        Tensor c = Te.computeN("C", "tensorize_pattern", Shape.of(t, t), idx -> {
            IterVar k = Te.reduceAxis(kt, "k");
            Expr av = a.at(idx.get(0), k);
            Expr bv = bT ? b.at(idx.get(1), k) : b.at(k, idx.get(1));
            // float32 inputs (TF32) are read as they are: the pattern has no cast to match
            return in == DType.FLOAT32
                    ? Te.sum(k, av.mul(bv))
                    : Te.sum(k, av.cast(DType.FLOAT32).mul(bv.cast(DType.FLOAT32)));
        });
        String what =
                in == DType.FLOAT32 ? "float32 (rounded to tf32)" : in.name().toLowerCase();
        String desc = what + " x " + what + " -> float32 16x16x" + kt + " tile of one"
                + " warp (nvcuda::wmma mma_sync), B " + (bT ? "[n, k] (col_major fragment)" : "[k, n] (row_major)");
        // the first elements 32-byte aligned: 16 half-precision elements of A and B, 8 float32 ones; 8 of C
        int align = in == DType.FLOAT32 ? 8 : 16;
        return new TensorIntrinsic(
                name,
                desc,
                Target.Kind.CUDA,
                List.of(MIN_ARCH),
                ComputeDAG.of(c),
                List.of(align, align, 8),
                List.of(true, true, true));
    }
}
