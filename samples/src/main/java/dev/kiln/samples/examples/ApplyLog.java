package dev.kiln.samples.examples;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.IterVar;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.nio.file.Path;

/** Builds the best program of a tuning log (the {@code tune} sample's) without searching. */
public final class ApplyLog {
    private ApplyLog() {}

    /** {@code ./kiln sample apply [n] [log]}: defaults 256 and tuning.jsonl (run {@code ./kiln sample tune} first). */
    public static void main(String[] args) {
        run(Samples.intArg(args, 0, 256), Path.of(args.length > 1 ? args[1] : "tuning.jsonl"));
    }

    public static void run(int n, Path log) {
        // readme:begin
        Tensor A = placeholder("A", FLOAT32, n, n); // the same computation as when it was tuned
        Tensor B = placeholder("B", FLOAT32, n, n);
        IterVar k = reduceAxis(n, "k");
        Tensor C = compute("C", shape(n, n), (i, j) -> sum(k, A.at(i, k).mul(B.at(k, j))));

        Schedule best = AutoSchedule.bestSchedule(ComputeDAG.of(C), Target.CPU, log); // no search
        System.out.println(best.toJavaSource()); // the tuned program as ScheduleBuilder calls
        try (CompiledKernel kernel = AutoSchedule.build(C, Target.CPU, log);
                NDArray a = NDArray.random(FLOAT32, 1, n, n);
                NDArray b = NDArray.random(FLOAT32, 2, n, n);
                NDArray c = NDArray.allocate(FLOAT32, n, n);
                NDArray expected = NDArray.allocate(FLOAT32, n, n)) {
            kernel.call(a, b, c);
            Interpreter.run(kernel.func(), a, b, expected);
            c.assertClose(expected, 1e-4, 1e-4);
        }
        // readme:end
    }
}
