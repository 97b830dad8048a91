package dev.kiln.jit.jvm;

import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;

import dev.kiln.interp.Interpreter;
import dev.kiln.interp.Program;
import dev.kiln.ir.DType;
import dev.kiln.ir.IterVar;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;

/**
 * Not a unit test: times the JVM backend against the interpreter on a vectorized elementwise add
 * and a tiled, vectorized, parallel 256^3 float32 matmul. Run with
 * {@code java --add-modules jdk.incubator.vector -cp ... dev.kiln.jit.jvm.JvmSpeed [n] [cores]}.
 */
public final class JvmSpeed {
    private JvmSpeed() {}

    public static void main(String[] argv) {
        int n = argv.length > 0 ? Integer.parseInt(argv[0]) : 256;
        int cores = argv.length > 1
                ? Integer.parseInt(argv[1])
                : Runtime.getRuntime().availableProcessors();
        add(1 << 20, cores);
        matmul(n, cores);
    }

    private static void add(int n, int cores) {
        Tensor a = placeholder("A", DType.FLOAT32, n), b = placeholder("B", DType.FLOAT32, n);
        Tensor c = compute("C", shape(n), i -> a.at(i).add(b.at(i)));
        ScheduleBuilder s = ScheduleBuilder.on(ComputeDAG.of(c));
        var parts = s.stage("C").split("i", 64);
        s.stage("C").vectorize(parts.get(1));
        PrimFunc serial = Lowering.lower("add_vec", s.build());
        s.stage("C").parallel(parts.get(0));
        PrimFunc par = Lowering.lower("add_vec_par", s.build());
        try (NDArray x = NDArray.random(DType.FLOAT32, 1, n);
                NDArray y = NDArray.random(DType.FLOAT32, 2, n);
                NDArray z = NDArray.allocate(DType.FLOAT32, n)) {
            double flops = n;
            Program p = Interpreter.compile(serial);
            report("add 2^20 interpreter", flops, 3, () -> p.run(x, y, z));
            JvmKernel k1 = new JvmBackend().compile(serial, JvmTarget.jvm(1));
            report("add 2^20 jvm vectorized, 1 thread", flops, 200, () -> k1.call(x, y, z));
            JvmKernel k2 = new JvmBackend().compile(par, JvmTarget.jvm(cores));
            report("add 2^20 jvm vectorized, " + cores + " threads", flops, 200, () -> k2.call(x, y, z));
        }
    }

    private static void matmul(int n, int cores) {
        Tensor a = placeholder("A", DType.FLOAT32, n, n), b = placeholder("B", DType.FLOAT32, n, n);
        IterVar k = reduceAxis(n, "k");
        Tensor c = compute("C", shape(n, n), (i, j) -> sum(k, a.at(i, k).mul(b.at(k, j))));
        ComputeDAG dag = ComputeDAG.of(c);
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var st = s.stage("C");
        var is = st.split("i", 4);
        var js = st.split("j", 32);
        st.reorder(is.get(0), js.get(0), st.loop("k"), is.get(1), js.get(1));
        st.unroll(is.get(1));
        st.vectorize(js.get(1));
        PrimFunc serial = Lowering.lower("matmul_tiled", s.build());
        st.parallel(is.get(0));
        PrimFunc par = Lowering.lower("matmul_tiled_par", s.build());
        PrimFunc naive = dev.kiln.lower.LowerDefault.lower("matmul", dag);
        double flops = 2.0 * n * n * n;
        try (NDArray x = NDArray.random(DType.FLOAT32, 1, n, n);
                NDArray y = NDArray.random(DType.FLOAT32, 2, n, n);
                NDArray z = NDArray.allocate(DType.FLOAT32, n, n)) {
            Program p = Interpreter.compile(naive);
            report("matmul " + n + " interpreter (default lowering)", flops, 1, () -> p.run(x, y, z));
            Program pt = Interpreter.compile(serial);
            report("matmul " + n + " interpreter (tiled schedule)", flops, 1, () -> pt.run(x, y, z));
            JvmKernel k0 = new JvmBackend().compile(naive, JvmTarget.jvm(1));
            report("matmul " + n + " jvm, default lowering", flops, 5, () -> k0.call(x, y, z));
            JvmKernel k1 = new JvmBackend().compile(serial, JvmTarget.jvm(1));
            report("matmul " + n + " jvm tiled+vectorized, 1 thread", flops, 20, () -> k1.call(x, y, z));
            JvmKernel k2 = new JvmBackend().compile(par, JvmTarget.jvm(cores));
            report("matmul " + n + " jvm tiled+vectorized, " + cores + " threads", flops, 20, () -> k2.call(x, y, z));
            if (Boolean.getBoolean("kiln.speed.source")) System.out.println(k2.func() + "\n" + k2.notes());
        }
    }

    /** Runs {@code r} for warm-up, then {@code reps} times; prints the best GFLOP/s. */
    private static void report(String what, double flops, int reps, Runnable r) {
        for (int w = 0; w < Math.max(2, reps / 4); w++) r.run();
        double best = Double.MAX_VALUE;
        for (int i = 0; i < reps; i++) {
            long t0 = System.nanoTime();
            r.run();
            best = Math.min(best, (System.nanoTime() - t0) / 1e9);
        }
        System.out.printf("%-50s %10.3f ms  %8.2f GFLOP/s%n", what, best * 1e3, flops / best / 1e9);
    }
}
