package dev.kiln.jit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.LowPrecision;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The accumulators of a tensorized register tile stay in registers across the reduction loop, as
 * oneDNN's brgemm keeps them: the hot loop of the compiled kernel (the innermost loop with the
 * instruction, {@link AsmLoops}) loads and stores no accumulator. The intrinsic's code
 * ({@link CpuIntrinsics}) loads and stores the accumulator around every instruction, and LLVM's
 * LICM and GVN promote them (the buffers are {@code noalias}); this test catches a change that
 * loses that. Numbers are checked exactly against plain Java. Skips without AVX-512 VNNI.
 */
class AccumulatorResidencyTest {
    private static final CpuTarget HOST = LlvmBackend.hostTarget();
    private final LlvmBackend llvm = new LlvmBackend();

    private static void assumeVnni() {
        String why = TensorIntrinsics.get(TensorIntrinsics.VNNI_U8S8).unavailableReason(HOST);
        assumeTrue(why == null, why);
    }

    /** A 4 x 2 register tile (8 accumulators) under a serial reduction loop, nothing unrolled by the schedule. */
    @Test
    void registerTileUnderASerialReduction() {
        assumeVnni();
        int m = 8, n = 64, k = 512;
        ComputeDAG dag = TensorizeFixture.packedDense(DType.UINT8, DType.INT8, m, n, k);
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("matmul_packed");
        c.split("m", 4);
        c.split("n", 2, 16);
        c.split("k", 4);
        c.reorder("m.0", "n.0", "k.0", "m.1", "n.1", "n.2", "k.1");
        c.tensorize("n.2", TensorIntrinsics.VNNI_U8S8);
        PrimFunc f = Lowering.lower("vnni_tile", s.build());
        NDArray x = TensorizeFixture.full(DType.UINT8, 31, m, k);
        NDArray w = TensorizeFixture.full(DType.INT8, 32, n, k);
        NDArray out = NDArray.allocate(DType.INT32, m, n);
        AsmLoops.Loop hot;
        try (LlvmKernel kern = llvm.compile(f, HOST)) {
            kern.call(x, w, out);
            hot = AsmLoops.hot(kern.source(), "vpdpbusd");
        }
        System.out.println("vnni 4x2 tile, serial k: " + hot);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                int acc = 0;
                for (int q = 0; q < k; q++) acc += (int) x.getLong(i, q) * (int) w.getLong(j, q);
                assertThat(out.getLong(i, j)).as("out[%d, %d]", i, j).isEqualTo(acc);
            }
        assertThat(hot).as("a loop with vpdpbusd").isNotNull();
        assertThat(hot.intrinsic() % 8).as("whole tiles of 8 in " + hot).isZero();
        assertThat(hot.zmmStores()).as("accumulator stores in " + hot).isZero();
        // the only 512-bit loads are B's 2 vectors per k step (AsmLoops counts indexed addresses too)
        assertThat(hot.zmmLoads()).as("loads other than B's in " + hot).isEqualTo(hot.intrinsic() / 8 * 2);
    }

    /**
     * The best int8 GEMM 1024 program of the quiet run of 2026-12-02 (docs/PERFORMANCE.md: 0.47 of
     * vpdpbusd's peak): a 4 x 2 tile under a 64-step reduction unrolled whole (auto_unroll 512),
     * inside a 32-step loop over column tiles. Its hot loop stores only the 8 final accumulators; its
     * loads are B's 128 vectors and A's 4-byte groups, broadcast once per row tile and reloaded from
     * the stack.
     */
    @Test
    void loggedGemm1024() throws Exception {
        assumeVnni();
        int m = 1024, n = 1024, k = 1024;
        Tensor x = Te.placeholder("x", DType.UINT8, m, k);
        Tensor wp = Te.placeholder("w_packed", DType.INT8, n / 16, k / 4, 16, 4);
        ComputeDAG dag = ComputeDAG.of(LowPrecision.matmulPacked(x, wp));
        String steps = "[[\"SP\", 2, 1, 1024, [16], 1], [\"SP\", 2, 3, 1024, [4], 1],"
                + " [\"SP\", 2, 0, 1024, [16, 16, 4], 1], [\"SP\", 2, 4, 64, [1, 32, 2], 1],"
                + " [\"SP\", 2, 9, 256, [64], 1], [\"RE\", 2, [0, 4, 1, 5, 9, 2, 6, 10, 3, 7, 8, 11]],"
                + " [\"TS\", 2, 10, \"x86.avx512.vpdpbusd.16x4\"], [\"FU\", 2, [0, 1, 2]], [\"AN\", 2, 0, 3],"
                + " [\"PR\", 2, 0, \"auto_unroll_max_step$512\"]]";
        Schedule s = Schedule.fromSteps(new ObjectMapper().readTree(steps), dag);
        PrimFunc f = Lowering.lower("gemm1024_int8", s);
        NDArray xa = TensorizeFixture.full(DType.UINT8, 51, m, k);
        NDArray wa = TensorizeFixture.full(DType.INT8, 52, n / 16, k / 4, 16, 4);
        NDArray out = NDArray.allocate(DType.INT32, m, n);
        AsmLoops.Loop hot;
        try (LlvmKernel kern = llvm.compile(f, HOST)) {
            kern.call(xa, wa, out);
            hot = AsmLoops.hot(kern.source(), "vpdpbusd");
        }
        System.out.println("GEMM 1024 int8 (logged best): " + hot);
        SplittableRandom r = new SplittableRandom(53);
        for (int t = 0; t < 2000; t++) {
            int i = r.nextInt(m), j = r.nextInt(n);
            int acc = 0;
            for (int q = 0; q < k; q++) acc += (int) xa.getLong(i, q) * (int) wa.getLong(j / 16, q / 4, j % 16, q % 4);
            assertThat(out.getLong(i, j)).as("out[%d, %d]", i, j).isEqualTo(acc);
        }
        assertThat(hot).as("a loop with vpdpbusd").isNotNull();
        assertThat(hot.intrinsic()).isEqualTo(512);
        // 8 accumulators: only their final stores; loads: B's 2 x 64 vectors and A's 4 x 64 broadcast groups
        assertThat(hot.zmmStores()).as("accumulator stores in " + hot).isLessThanOrEqualTo(8);
        assertThat(hot.zmmLoads()).as("loads in " + hot).isLessThanOrEqualTo(2 * 64 + 4 * 64);
    }
}
