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
 * No alignment is needed. Each comes in depths of 1 to 16 chained tile multiplies ({@link #STEPS}), C loaded
 * once and stored once around the chain. They need the CPU features {@code amx-tile} and {@code amx-bf16} or
 * {@code amx-int8} (Sapphire Rapids and later); the LLVM backend implements them with LLVM's
 * {@code llvm.x86.tileloadd64.internal}, {@code tdpbf16ps.internal} / {@code tdpbusd.internal} and
 * {@code tilestored64.internal}, whose shapes LLVM's tile configuration passes turn into the kernel's
 * {@code ldtilecfg}.
 */
public final class AmxTensorIntrinsics {
    private AmxTensorIntrinsics() {}

    /** {@code tdpbf16ps}: bfloat16 x bfloat16 -> float32, a 16 x 16 x 32 tile. */
    public static final String AMX_BF16 = "x86.amx.tdpbf16ps.16x16x32";

    /** {@code tdpbusd}: uint8 x int8 -> int32, a 16 x 16 x 64 tile. */
    public static final String AMX_U8S8 = "x86.amx.tdpbusd.16x16x64";

    /**
     * How many tile multiplies one intrinsic may chain over the reduction (1, 2, 4, 8, 16): the deeper variants
     * ({@code x86.amx.tdpbf16ps.16x16x64} to {@code ...x512}, {@code x86.amx.tdpbusd.16x16x128} to {@code ...x1024})
     * keep C in its tile register across that many steps, loading and storing it once.
     */
    public static final List<Integer> STEPS = List.of(1, 2, 4, 8, 16);

    /** The rows of every tile, and the columns of C. */
    public static final int ROWS = 16;

    /** The bytes of a tile row. */
    public static final int ROW_BYTES = 64;

    /** Every AMX intrinsic's name: both instructions at every depth of {@link #STEPS}. */
    public static final List<String> ALL = STEPS.stream()
            .flatMap(n -> java.util.stream.Stream.of(bf16(n), u8s8(n)))
            .toList();

    /** The bf16 tile multiply chained {@code steps} times over the reduction (32 x steps deep). */
    public static String bf16(int steps) {
        return "x86.amx.tdpbf16ps.16x16x" + 32 * steps;
    }

    /** The u8 x s8 tile multiply chained {@code steps} times over the reduction (64 x steps deep). */
    public static String u8s8(int steps) {
        return "x86.amx.tdpbusd.16x16x" + 64 * steps;
    }

    static void registerAll() {
        for (int n : STEPS) {
            TensorIntrinsics.register(tile(
                    bf16(n),
                    "bf16 x bf16 -> f32 16x16x" + 32 * n + " tile multiply (AMX tdpbf16ps" + chained(n) + ")",
                    List.of("amx-tile", "amx-bf16"),
                    DType.BFLOAT16,
                    DType.BFLOAT16,
                    DType.FLOAT32,
                    n));
            TensorIntrinsics.register(tile(
                    u8s8(n),
                    "u8 x s8 -> s32 16x16x" + 64 * n + " tile multiply (AMX tdpbusd" + chained(n) + ")",
                    List.of("amx-tile", "amx-int8"),
                    DType.UINT8,
                    DType.INT8,
                    DType.INT32,
                    n));
        }
    }

    private static String chained(int n) {
        return n == 1 ? "" : " x " + n + ", C kept in its tile";
    }

    /** Whether {@code name} is an AMX tile intrinsic. */
    public static boolean isAmx(String name) {
        return ALL.contains(name);
    }

    /** How many tile multiplies AMX intrinsic {@code in} chains: its reduction over one tile row's elements. */
    public static int steps(TensorIntrinsic in) {
        long depth = in.loopExtents().get(2);
        long perTile = ROW_BYTES / in.pattern().inputs().get(0).dtype().bytes();
        return Math.toIntExact(depth / perTile);
    }

    private static TensorIntrinsic tile(
            String name, String description, List<String> features, DType a, DType b, DType acc, int steps) {
        int group = 4 / a.bytes();
        int depth = ROW_BYTES / a.bytes() * steps;
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
