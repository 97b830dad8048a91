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
 * The Intel AMX tile intrinsics: one instruction multiplies a 16-row tile of A by a tile of B into a 16 x 16 tile
 * of C, {@code C[i, j] += sum_k acc(A[i, k]) * acc(B[k / g, j, k % g])}, with A 16 rows of 64 bytes (32 bfloat16 or
 * 64 uint8 values: {@code k < 64 / size}), B 16 rows of 16 groups of g (2 bfloat16 or 4 int8 values, 64 bytes a
 * row: the layout {@code dev.kiln.nn.LowPrecision}'s packed weights already have, 16 columns of g consecutive
 * reduction elements, so a packed weight's 16-column block is a B tile of consecutive rows) and C 16 rows of 16
 * float32 or int32 values. A's and C's rows may lie any fixed distance apart (the tile load's stride), B's are dense.
 * No alignment is needed. They need the CPU features {@code amx-tile} and {@code amx-bf16} or {@code amx-int8}
 * (Sapphire Rapids and later); the LLVM backend implements them with LLVM's {@code llvm.x86.tileloadd64.internal},
 * {@code tdpbf16ps.internal} / {@code tdpbusd.internal} and {@code tilestored64.internal}, whose shapes LLVM's tile
 * configuration passes turn into the kernel's {@code ldtilecfg}.
 */
public final class AmxTensorIntrinsics {
    private AmxTensorIntrinsics() {}

    /** {@code tdpbf16ps}: bfloat16 x bfloat16 -> float32, a 16 x 16 x 32 tile. */
    public static final String AMX_BF16 = "x86.amx.tdpbf16ps.16x16x32";

    /** {@code tdpbusd}: uint8 x int8 -> int32, a 16 x 16 x 64 tile. */
    public static final String AMX_U8S8 = "x86.amx.tdpbusd.16x16x64";

    /** The rows of every tile, and the columns of C. */
    public static final int ROWS = 16;

    /** The bytes of a tile row. */
    public static final int ROW_BYTES = 64;

    /** Every AMX intrinsic's name. */
    public static final List<String> ALL = List.of(AMX_BF16, AMX_U8S8);

    static void registerAll() {
        TensorIntrinsics.register(tile(
                AMX_BF16,
                "bf16 x bf16 -> f32 16x16x32 tile multiply (AMX tdpbf16ps)",
                List.of("amx-tile", "amx-bf16"),
                DType.BFLOAT16,
                DType.BFLOAT16,
                DType.FLOAT32));
        TensorIntrinsics.register(tile(
                AMX_U8S8,
                "u8 x s8 -> s32 16x16x64 tile multiply (AMX tdpbusd)",
                List.of("amx-tile", "amx-int8"),
                DType.UINT8,
                DType.INT8,
                DType.INT32));
    }

    /** Whether {@code name} is an AMX tile intrinsic. */
    public static boolean isAmx(String name) {
        return ALL.contains(name);
    }

    private static TensorIntrinsic tile(
            String name, String description, List<String> features, DType a, DType b, DType acc) {
        int group = 4 / a.bytes();
        int depth = ROW_BYTES / a.bytes();
        Tensor ta = Te.placeholder("A", a, ROWS, depth);
        Tensor tb = Te.placeholder("B", b, depth / group, ROWS, group);
        Tensor tc = Te.computeN("C", "tensorize_pattern", Shape.of(ROWS, ROWS), idx -> {
            IterVar k = Te.reduceAxis(depth, "k");
            Expr bv = tb.at(k.floordiv(group), idx.get(1), k.floormod(group));
            return Te.sum(k, ta.at(idx.get(0), k).cast(acc).mul(bv.cast(acc)));
        });
        return new TensorIntrinsic(
                name,
                description,
                Target.Kind.CPU,
                features,
                ComputeDAG.of(tc),
                List.of(1, 1, 1),
                List.of(true, false, true));
    }
}
