package dev.kiln.samples.examples;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.IterVar;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.nio.file.Path;

/** Tunes a matmul for this CPU, keeping every measurement in a log, and calls the best program. */
public final class Tune {
    private Tune() {}

    /** {@code ./kiln sample tune [n] [trials] [log]}: defaults 256, 64 trials, tuning.jsonl. */
    public static void main(String[] args) {
        run(
                Samples.intArg(args, 0, 256),
                Samples.intArg(args, 1, 64),
                Path.of(args.length > 2 ? args[2] : "tuning.jsonl"));
    }

    public static void run(int n, int trials, Path log) {
        // readme:begin
        Tensor A = placeholder("A", FLOAT32, n, n);
        Tensor B = placeholder("B", FLOAT32, n, n);
        IterVar k = reduceAxis(n, "k");
        Tensor C = compute("C", shape(n, n), (i, j) -> sum(k, A.at(i, k).mul(B.at(k, j))));

        TuneOptions options =
                TuneOptions.builder().trials(trials).logFile(log).seed(1).build();
        try (TuneResult kernel = AutoSchedule.tune(C, Target.CPU, options); // progress bar on a terminal
                NDArray a = NDArray.random(FLOAT32, 1, n, n);
                NDArray b = NDArray.random(FLOAT32, 2, n, n);
                NDArray c = NDArray.allocate(FLOAT32, n, n);
                NDArray expected = NDArray.allocate(FLOAT32, n, n)) {
            System.out.println(kernel.summary()); // best time and GFLOP/s, trials, errors, why it stopped
            kernel.call(a, b, c); // the result is the best program, compiled
            Interpreter.run(LowerDefault.lower("matmul", ComputeDAG.of(C)), a, b, expected);
            c.assertClose(expected, 1e-4, 1e-4);
        }
        // readme:end
    }
}
