package dev.kiln.samples.examples;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;

import dev.kiln.Kiln;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.IterVar;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;

/** A matmul scheduled by hand: a register tile in a local cache, parallel outer loops, a vector loop. */
public final class ScheduleByHand {
    private ScheduleByHand() {}

    /** {@code ./kiln sample schedule [n]}: an n x n matmul, n a multiple of 16 (default 512). */
    public static void main(String[] args) {
        run(Samples.intArg(args, 0, 512));
    }

    public static void run(int n) {
        // readme:begin
        Tensor A = placeholder("A", FLOAT32, n, n);
        Tensor B = placeholder("B", FLOAT32, n, n);
        IterVar k = reduceAxis(n, "k");
        Tensor C = compute("C", shape(n, n), (i, j) -> sum(k, A.at(i, k).mul(B.at(k, j))));
        ComputeDAG dag = ComputeDAG.of(C);

        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("C");
        var local = c.cacheWrite("local"); // accumulate in a small local tile
        c.split("i", 8); // [i.0, i.1]  (i.outer / i.inner also work)
        c.split("j", 16);
        c.reorder("i.0", "j.0", "i.1", "j.1");
        local.computeAt(c, "j.0");
        c.parallel(c.fuse("i.0", "j.0"));
        c.vectorize("j.1");
        Schedule schedule = s.build();
        System.out.println(schedule.toJson()); // one JSON line; Schedule.fromJson(line, dag) reads it back
        System.out.println(schedule.toJavaSource()); // Java that rebuilds it

        try (CompiledKernel kernel = Kiln.compile(schedule, Target.CPU);
                NDArray a = NDArray.random(FLOAT32, 1, n, n);
                NDArray b = NDArray.random(FLOAT32, 2, n, n);
                NDArray out = NDArray.allocate(FLOAT32, n, n);
                NDArray expected = NDArray.allocate(FLOAT32, n, n)) {
            kernel.call(a, b, out);
            Interpreter.run(LowerDefault.lower("matmul", dag), a, b, expected); // the unscheduled program
            out.assertClose(expected, 1e-4, 1e-4); // a schedule changes how, never what
            System.out.println("the scheduled matmul matches the default lowering");
        }
        // readme:end
    }
}
