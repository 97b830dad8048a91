package dev.kiln.jit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Tensorized register tiles whose rows leave a tail (6 x 4, 12 x 2, 14 x 2 accumulators, as
 * oneDNN's brgemm tiles): the lowering guards the tail around the intrinsic's nest, the numbers
 * are exact against plain Java (bf16 within its bound), and the hot loop of one k step keeps the
 * accumulators in registers and loads each B vector once (the broadcast A groups and the
 * instructions counted as {@link AccumulatorResidencyTest} counts them). Skips without the feature.
 */
class TensorizeRowTailTest {
    private static final CpuTarget HOST = TensorizeFixture.HOST;
    private final LlvmBackend llvm = new LlvmBackend();

    /**
     * {@code m} rows in blocks of {@code rowBlocks} tiles of {@code rows} (the last block cut by the
     * tail), {@code n / 16} vectors in tiles of {@code vectors}; per tile a serial loop over the k
     * steps, the register tile's loops unrolled inside it around the tensorized nest.
     */
    static Schedule tile(ComputeDAG dag, String intrinsic, long m, long n, int rows, int rowBlocks, int vectors) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("matmul_packed");
        c.split("m", rowBlocks, rows);
        c.split("n", vectors, 16);
        int group = intrinsic.equals(TensorIntrinsics.VNNI_U8S8) ? 4 : 2;
        c.split("k", group);
        // m.0: blocks of rows, n.0: column tiles, m.1: tiles in a block, k.0: the k steps,
        // m.2 x n.1: the register tile around the intrinsic's nest (n.2, k.1)
        c.reorder("m.0", "n.0", "m.1", "k.0", "m.2", "n.1", "n.2", "k.1");
        c.tensorize("n.2", intrinsic);
        c.unroll("m.2");
        c.unroll("n.1");
        return s.build();
    }

    @Test
    void rowTailTilesAreExactAndLoadEachBVectorOncePerKStep() {
        TensorizeFixture.assumeIntrinsic(TensorIntrinsics.VNNI_U8S8);
        int m = 100, n = 128, k = 256;
        ComputeDAG dag = TensorizeFixture.packedDense(DType.UINT8, DType.INT8, m, n, k);
        NDArray x = TensorizeFixture.full(DType.UINT8, 41, m, k);
        NDArray w = TensorizeFixture.full(DType.INT8, 42, n, k);
        int[][] tiles = {{4, 2}, {6, 4}, {12, 2}, {14, 2}};
        for (int[] t : tiles) {
            NDArray out = NDArray.allocate(DType.INT32, m, n);
            PrimFunc f = Lowering.lower("vnni_tail", tile(dag, TensorIntrinsics.VNNI_U8S8, m, n, t[0], 2, t[1]));
            List<AsmLoops.Loop> loops;
            try (LlvmKernel kern = llvm.compile(f, HOST)) {
                kern.call(x, w, out);
                loops = AsmLoops.innermost(kern.source(), "vpdpbusd");
            }
            // the full tiles' loop: the one with the most instructions (the others run the tail's rows)
            AsmLoops.Loop hot = loops.stream()
                    .max(Comparator.comparingInt(AsmLoops.Loop::intrinsic))
                    .orElse(null);
            System.out.println("vnni " + t[0] + "x" + t[1] + " over " + m + " rows: " + hot + "; all: " + loops);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    int acc = 0;
                    for (int q = 0; q < k; q++) acc += (int) x.getLong(i, q) * (int) w.getLong(j, q);
                    assertThat(out.getLong(i, j))
                            .as("%dx%d: out[%d, %d]", t[0], t[1], i, j)
                            .isEqualTo(acc);
                }
            int perStep = t[0] * t[1];
            assertThat(hot).as("a loop with vpdpbusd").isNotNull();
            assertThat(hot.intrinsic() % perStep).as("whole tiles in " + hot).isZero();
            int steps = hot.intrinsic() / perStep;
            assertThat(hot.zmmStores()).as("accumulator stores in " + hot).isZero();
            // B's vectors: loaded once per k step, or read by the instruction itself at most once per row
            assertThat(hot.zmmLoads() + hot.intrinsicFromMemory())
                    .as("B reads in " + hot)
                    .isLessThanOrEqualTo(steps * t[1]);
            assertTailsResident(loops, tailRows(m, t[0], 2), t[1]);
        }
    }

    /** The rows of the last, partial tile: {@code m} rows in blocks of {@code blocks} tiles of {@code rows}. */
    static int tailRows(int m, int rows, int blocks) {
        int rest = m % (rows * blocks) % rows;
        return rest == 0 ? rows : rest;
    }

    /**
     * Every loop with the instruction, the partial tile's included, keeps its accumulators in
     * registers (no 512-bit store) and reads each B vector once per k step of its rows: the tail
     * runs as a tile of {@code tailRows} rows, not as the full tile with a guard per row (which kept
     * LLVM from promoting the accumulators: 16 loads and 16 stores of them per k step of a 6 x 4
     * tile's 4-row tail).
     */
    static void assertTailsResident(List<AsmLoops.Loop> loops, int tailRows, int vectors) {
        assertThat(loops).as("loops with the instruction").isNotEmpty();
        for (AsmLoops.Loop l : loops) {
            assertThat(l.zmmStores()).as("accumulator stores in " + l).isZero();
            assertThat(l.intrinsic() % vectors)
                    .as("whole rows of " + vectors + " in " + l)
                    .isZero();
            assertThat((l.zmmLoads() + l.intrinsicFromMemory()) * tailRows)
                    .as("B reads in " + l + " (rows of the smallest tile: " + tailRows + ")")
                    .isLessThanOrEqualTo(l.intrinsic());
        }
    }

    /**
     * A bf16 14 x 2 tile over 30 rows (tail of 2): within the bound of {@code TensorizeJitTest}, its
     * accumulators in registers in the full tiles and the tail.
     */
    @Test
    void bf16RowTailWithinTheBf16Bound() {
        TensorizeFixture.assumeIntrinsic(TensorIntrinsics.BF16_DOT);
        int m = 30, n = 64, kk = 96;
        ComputeDAG dag = TensorizeFixture.packedDense(DType.BFLOAT16, DType.BFLOAT16, m, n, kk);
        TensorizeFixture.Bf16Inputs in = TensorizeFixture.Bf16Inputs.random(61, 62, m, n, kk);
        NDArray out = NDArray.allocate(DType.FLOAT32, m, n);
        PrimFunc f = Lowering.lower("bf16_tail", tile(dag, TensorIntrinsics.BF16_DOT, m, n, 14, 1, 2));
        List<AsmLoops.Loop> loops;
        try (LlvmKernel k = llvm.compile(f, HOST)) {
            k.call(in.x(), in.w(), out);
            assertThat(k.source()).contains("vdpbf16ps");
            loops = AsmLoops.innermost(k.source(), "vdpbf16ps");
        }
        System.out.println("bf16 14x2 over " + m + " rows: " + loops);
        // the 2-row tail is a tile of its own: accumulators in registers there too
        assertTailsResident(loops, tailRows(m, 14, 1), 2);
        in.assertWithinBound(out, m, n, kk);
    }

    /**
     * bf16 in oneDNN's brgemm shapes for avx512_core_bf16 (6 x 4: 24 accumulators, 4 B vectors and
     * one broadcast in registers; 14 x 2), over 100 rows (tails of 4 and 2 rows): within the bf16
     * bound, and every loop with {@code vdpbf16ps} keeps its accumulators in registers and reads
     * each B vector once per k step, as brgemm's kernel does (which broadcasts A into a register per
     * row, {@code vpbroadcastd}, and reuses it across the row's vectors).
     */
    @Test
    void bf16BrgemmTilesKeepAccumulatorsAndReadBOncePerKStep() {
        TensorizeFixture.assumeIntrinsic(TensorIntrinsics.BF16_DOT);
        int m = 100, n = 128, kk = 64;
        ComputeDAG dag = TensorizeFixture.packedDense(DType.BFLOAT16, DType.BFLOAT16, m, n, kk);
        TensorizeFixture.Bf16Inputs in = TensorizeFixture.Bf16Inputs.random(71, 72, m, n, kk);
        for (int[] t : new int[][] {{6, 4}, {14, 2}}) {
            NDArray out = NDArray.allocate(DType.FLOAT32, m, n);
            PrimFunc f = Lowering.lower("bf16_brgemm", tile(dag, TensorIntrinsics.BF16_DOT, m, n, t[0], 2, t[1]));
            List<AsmLoops.Loop> loops;
            try (LlvmKernel k = llvm.compile(f, HOST)) {
                k.call(in.x(), in.w(), out);
                loops = AsmLoops.innermost(k.source(), "vdpbf16ps");
            }
            System.out.println("bf16 " + t[0] + "x" + t[1] + " over " + m + " rows: " + loops);
            AsmLoops.Loop hot = loops.stream()
                    .max(Comparator.comparingInt(AsmLoops.Loop::intrinsic))
                    .orElse(null);
            assertThat(hot).as("a loop with vdpbf16ps").isNotNull();
            assertThat(hot.intrinsic() % (t[0] * t[1]))
                    .as("whole " + t[0] + "x" + t[1] + " tiles in " + hot)
                    .isZero();
            assertTailsResident(loops, tailRows(m, t[0], 2), t[1]);
            in.assertWithinBound(out, m, n, kk);
        }
    }
}
