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
 * The cuda module's code generator implements them under the same names.
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

    /** The compute capability every one of them needs. */
    public static final String MIN_ARCH = "sm_80";

    /** The tile size of m, n and k. */
    public static final int TILE = 16;

    /** Every Tensor Core intrinsic's name. */
    public static final List<String> ALL = List.of(WMMA_F16_NN, WMMA_F16_NT, WMMA_BF16_NN, WMMA_BF16_NT);

    static void registerAll() {
        TensorIntrinsics.register(wmma(WMMA_F16_NN, DType.FLOAT16, false));
        TensorIntrinsics.register(wmma(WMMA_F16_NT, DType.FLOAT16, true));
        TensorIntrinsics.register(wmma(WMMA_BF16_NN, DType.BFLOAT16, false));
        TensorIntrinsics.register(wmma(WMMA_BF16_NT, DType.BFLOAT16, true));
    }

    /** The intrinsic for inputs of {@code in} with B transposed ({@code [j, k]}) or not, or null for another dtype. */
    public static String forInputs(DType in, boolean bTransposed) {
        return switch (in) {
            case FLOAT16 -> bTransposed ? WMMA_F16_NT : WMMA_F16_NN;
            case BFLOAT16 -> bTransposed ? WMMA_BF16_NT : WMMA_BF16_NN;
            default -> null;
        };
    }

    /** Whether {@code name} is a Tensor Core intrinsic with B as {@code [j, k]}. */
    public static boolean bTransposed(String name) {
        return name.endsWith(".nt");
    }

    private static TensorIntrinsic wmma(String name, DType in, boolean bT) {
        int t = TILE;
        Tensor a = Te.placeholder("A", in, t, t);
        Tensor b = Te.placeholder("B", in, t, t);
        Tensor c = Te.computeN("C", "tensorize_pattern", Shape.of(t, t), idx -> {
            IterVar k = Te.reduceAxis(t, "k");
            Expr bv = bT ? b.at(idx.get(1), k) : b.at(k, idx.get(1));
            return Te.sum(k, a.at(idx.get(0), k).cast(DType.FLOAT32).mul(bv.cast(DType.FLOAT32)));
        });
        String desc = in.name().toLowerCase() + " x " + in.name().toLowerCase() + " -> float32 16x16x16 tile of one"
                + " warp (nvcuda::wmma mma_sync), B " + (bT ? "[n, k] (col_major fragment)" : "[k, n] (row_major)");
        return new TensorIntrinsic(
                name,
                desc,
                Target.Kind.CUDA,
                List.of(MIN_ARCH),
                ComputeDAG.of(c),
                List.of(16, 16, 8),
                List.of(true, true, true));
    }
}
