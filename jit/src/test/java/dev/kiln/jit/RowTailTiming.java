package dev.kiln.jit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A same-process A/B of tensorized register tiles on int8 GEMM 1024, one thread: the 4 x 2 tile the
 * search used to draw against row-tail tiles (6 x 4, 12 x 2, 14 x 2) and exact 8 x 2 / 16 x 1, all
 * with the same loop structure ({@link TensorizeRowTailTest#tile}, about 64 rows per block). Each
 * round calls every kernel once, in turn, so load from other processes falls on all of them; the
 * medians' ratios to 4 x 2 are printed. Not a test of the suite (its name does not end in Test);
 * run it by name: {@code ./kiln mvn -o -q verify -pl jit -am -Dtest=RowTailTiming
 * -Dsurefire.failIfNoSpecifiedTests=false}. Every output is checked against plain Java on sampled
 * elements. Skips without AVX-512 VNNI.
 */
class RowTailTiming {
    private static final CpuTarget HOST = LlvmBackend.hostTarget();

    @Test
    void gemm1024Int8() {
        String why = TensorIntrinsics.get(TensorIntrinsics.VNNI_U8S8).unavailableReason(HOST);
        assumeTrue(why == null, why);
        int m = 1024, n = 1024, k = 1024, rounds = Integer.getInteger("kiln.rounds", 21);
        ComputeDAG dag = TensorizeFixture.packedDense(DType.UINT8, DType.INT8, m, n, k);
        NDArray x = TensorizeFixture.full(DType.UINT8, 71, m, k);
        NDArray w = TensorizeFixture.full(DType.INT8, 72, n, k);
        // rows x vectors, row tiles per block
        Map<String, int[]> tiles = new LinkedHashMap<>();
        tiles.put("4x2", new int[] {4, 2, 16});
        tiles.put("8x2", new int[] {8, 2, 8});
        tiles.put("16x1", new int[] {16, 1, 4});
        tiles.put("6x4", new int[] {6, 4, 10});
        tiles.put("12x2", new int[] {12, 2, 5});
        tiles.put("14x2", new int[] {14, 2, 5});
        LlvmBackend llvm = new LlvmBackend();
        List<LlvmKernel> kernels = new ArrayList<>();
        List<NDArray> outs = new ArrayList<>();
        try {
            for (var e : tiles.entrySet()) {
                int[] t = e.getValue();
                var f = Lowering.lower(
                        "gemm_" + e.getKey(),
                        TensorizeRowTailTest.tile(dag, TensorIntrinsics.VNNI_U8S8, m, n, t[0], t[2], t[1]));
                kernels.add(llvm.compile(f, HOST));
                outs.add(NDArray.allocate(DType.INT32, m, n));
            }
            for (int i = 0; i < kernels.size(); i++) kernels.get(i).call(x, w, outs.get(i));
            long[][] ns = new long[kernels.size()][rounds];
            for (int r = 0; r < rounds; r++) {
                for (int i = 0; i < kernels.size(); i++) {
                    long t0 = System.nanoTime();
                    kernels.get(i).call(x, w, outs.get(i));
                    ns[i][r] = System.nanoTime() - t0;
                }
            }
            SplittableRandom rnd = new SplittableRandom(73);
            for (int s = 0; s < 300; s++) {
                int i = rnd.nextInt(m), j = rnd.nextInt(n);
                int acc = 0;
                for (int q = 0; q < k; q++) acc += (int) x.getLong(i, q) * (int) w.getLong(j, q);
                for (int v = 0; v < outs.size(); v++)
                    assertThat(outs.get(v).getLong(i, j))
                            .as("kernel %d out[%d, %d]", v, i, j)
                            .isEqualTo(acc);
            }
            double base = 0;
            int v = 0;
            for (String name : tiles.keySet()) {
                long[] a = ns[v++].clone();
                Arrays.sort(a);
                double med = a[a.length / 2] / 1e6;
                if (base == 0) base = med;
                System.out.printf(
                        "int8 GEMM 1024, 1 thread, tile %-5s median %.3f ms (%.0f GOP/s), 4x2 / this %.2fx%n",
                        name, med, 2.0 * m * n * k / med / 1e6, base / med);
            }
        } finally {
            for (LlvmKernel kern : kernels) kern.close();
        }
    }
}
