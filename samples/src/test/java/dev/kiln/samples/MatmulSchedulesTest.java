package dev.kiln.samples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.interp.Interpreter;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The hand-written matmul schedule computes the product on sizes its tiles do not divide, in the
 * interpreter (exact) and through the JIT with FMA contraction (rtol 1e-4, atol 1e-4), against
 * plain-Java loops on seeded random inputs.
 */
class MatmulSchedulesTest {

    @Test
    void tiledScheduleMatchesPlainJava() {
        for (int[] mnk : List.of(new int[] {70, 96, 300}, new int[] {33, 129, 65})) {
            int m = mnk[0], n = mnk[1], k = mnk[2];
            Workload w = Workloads.matmul(m, n, k);
            ComputeDAG dag = new ComputeDAG(List.of(w.output()));
            Schedule s = MatmulSchedules.tiled(dag, new MatmulSchedules.Tiles(32, 64, 4, 32, 64));
            PrimFunc f = Lowering.lower("tiled", s);
            try (NDArray a = NDArray.random(dev.kiln.ir.DType.FLOAT32, 11, m, k);
                    NDArray b = NDArray.random(dev.kiln.ir.DType.FLOAT32, 12, k, n);
                    NDArray c = NDArray.allocate(dev.kiln.ir.DType.FLOAT32, m, n);
                    NDArray d = NDArray.allocate(dev.kiln.ir.DType.FLOAT32, m, n)) {
                NDArray expected = w.expected(List.of(a, b));
                Interpreter.run(f, a, b, c);
                c.assertClose(expected, 1e-5, 1e-5);
                CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true);
                try (CompiledKernel kernel = Backend.forTarget(target).compile(f, target)) {
                    kernel.call(a, b, d);
                }
                d.assertClose(expected, 1e-4, 1e-4);
                assertThat(f.toString()).contains("allocate B.local");
                expected.close();
            }
        }
    }
}
