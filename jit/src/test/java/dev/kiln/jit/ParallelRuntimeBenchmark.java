package dev.kiln.jit;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CpuTarget;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * Measures the two parallel runtimes against the same kernel with a serial outer loop, on small
 * and large work: elementwise add of 4K and 16M floats (parallel over 64-float blocks, each block
 * one vector) and a 512^3 float32 matmul (i parallel, k serial, j vectorized). Variants are
 * measured round-robin (so load from other processes spreads over all of them) and reported as
 * the median time per call and its ratio to the serial kernel of the same round set.
 *
 * <p>Not part of the test suite (the class name does not end in Test). Run with
 * {@code ./kiln mvn verify -pl jit -am -Dtest=ParallelRuntimeBenchmark -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class ParallelRuntimeBenchmark {
    private static final DType F32 = DType.FLOAT32;

    static PrimFunc add(long n, ForKind outer) {
        Var o = new Var("o"), v = new Var("v");
        Buffer a = buf("A", F32, n), b = buf("B", F32, n), c = buf("C", F32, n);
        var idx = o.mul(64).add(v);
        return new PrimFunc(
                "add" + n + "_" + outer.displayName(),
                List.of(a, b, c),
                loop(
                        o,
                        n / 64,
                        outer,
                        loop(v, 64, ForKind.VECTORIZED, store(c, load(a, idx).add(load(b, idx)), idx))));
    }

    static PrimFunc matmul(int n, ForKind outer) {
        Var i = new Var("i"), j = new Var("j"), k = new Var("k"), j2 = new Var("j");
        Buffer a = buf("A", F32, n, n), b = buf("B", F32, n, n), c = buf("C", F32, n, n);
        Stmt body = Seq.of(
                loop(j, n, ForKind.VECTORIZED, store(c, FloatImm.f32(0), i, j)),
                loop(
                        k,
                        n,
                        ForKind.SERIAL,
                        loop(
                                j2,
                                n,
                                ForKind.VECTORIZED,
                                store(c, load(c, i, j2).add(load(a, i, k).mul(load(b, k, j2))), i, j2))));
        return new PrimFunc("mm" + n + "_" + outer.displayName(), List.of(a, b, c), loop(i, n, outer, body));
    }

    record Variant(String name, LlvmKernel kernel, ParallelRuntime runtime, long threshold, long cpt) {}

    @Test
    void run() throws Exception {
        CpuTarget t = JitCheck.TARGET;
        StringBuilder out = new StringBuilder();
        out.append("target: ").append(t).append('\n');
        out.append("loadavg before: ")
                .append(Files.readString(Path.of("/proc/loadavg")).trim())
                .append('\n');
        out.append(workload(t, "add 4K floats", add(4096, ForKind.SERIAL), add(4096, ForKind.PARALLEL), 20_000));
        out.append(workload(t, "add 16M floats", add(16 << 20, ForKind.SERIAL), add(16 << 20, ForKind.PARALLEL), 4));
        out.append(workload(t, "matmul 512^3", matmul(512, ForKind.SERIAL), matmul(512, ForKind.PARALLEL), 10));
        out.append(sweep(t));
        out.append("loadavg after: ")
                .append(Files.readString(Path.of("/proc/loadavg")).trim())
                .append('\n');
        System.out.println(out);
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target/parallel-runtime-benchmark.txt"), out.toString());
    }

    private String workload(CpuTarget t, String name, PrimFunc serial, PrimFunc parallel, int reps) {
        List<Variant> vs = new ArrayList<>();
        vs.add(new Variant("serial loop", JitCheck.BACKEND.compile(serial, t), null, 0, 0));
        for (ParallelRuntime r : ParallelRuntime.values()) {
            LlvmKernel k =
                    JitCheck.BACKEND.compile(parallel, t, JitOptions.defaults().withRuntime(r));
            vs.add(new Variant(r + " forced (threshold 0, 4 chunks/thread)", k, r, 0, 4));
            vs.add(new Variant(r + " forced (threshold 0, 1 chunk/thread)", k, r, 0, 1));
            vs.add(new Variant(
                    r + " default (threshold " + JitEngine.PARALLEL_THRESHOLD + ")",
                    k,
                    r,
                    JitEngine.PARALLEL_THRESHOLD,
                    JitEngine.CHUNKS_PER_THREAD));
        }
        String head = name + " (estimated work " + vs.get(1).kernel().code().gen.work() + " ops)";
        String table = measure(t, head, vs, serial, reps, 15);
        for (Variant x : vs) x.kernel().close();
        return table;
    }

    /** Where parallel starts to pay: add of growing sizes, serial against both runtimes forced parallel. */
    private String sweep(CpuTarget t) {
        StringBuilder sb = new StringBuilder("\nthreshold sweep: add of n floats, parallel forced (threshold 0)\n");
        for (long n : new long[] {4096, 16384, 65536, 262144, 1048576}) {
            List<Variant> vs = new ArrayList<>();
            PrimFunc serial = add(n, ForKind.SERIAL);
            vs.add(new Variant("serial loop", JitCheck.BACKEND.compile(serial, t), null, 0, 0));
            for (ParallelRuntime r : ParallelRuntime.values()) {
                vs.add(new Variant(
                        r + " forced",
                        JitCheck.BACKEND.compile(
                                add(n, ForKind.PARALLEL),
                                t,
                                JitOptions.defaults().withRuntime(r)),
                        r,
                        0,
                        JitEngine.CHUNKS_PER_THREAD));
            }
            String head = "n = " + n + " (estimated work "
                    + vs.get(1).kernel().code().gen.work() + " ops)";
            sb.append(measure(t, head, vs, serial, (int) Math.max(4, 40_000_000 / n), 9));
            for (Variant x : vs) x.kernel().close();
        }
        return sb.toString();
    }

    private static final com.sun.management.OperatingSystemMXBean OS = (com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean();

    private String measure(CpuTarget t, String head, List<Variant> vs, PrimFunc f, int reps, int rounds) {
        List<NDArray> args = JitCheck.randomArgs(f, 1);
        NDArray[] arr = args.toArray(NDArray[]::new);
        double[][] perCall = new double[vs.size()][rounds];
        double[] cpu = new double[vs.size()], wall = new double[vs.size()];
        for (int round = -2; round < rounds; round++) { // two warm-up rounds
            for (int v = 0; v < vs.size(); v++) {
                Variant x = vs.get(v);
                if (x.runtime() != null) {
                    LlvmBackend.tuneRuntime(t, x.runtime(), x.threshold(), JitEngine.SPIN, x.cpt());
                }
                long c0 = OS.getProcessCpuTime(), t0 = System.nanoTime();
                for (int r = 0; r < reps; r++) x.kernel().call(arr);
                long dt = System.nanoTime() - t0, dc = OS.getProcessCpuTime() - c0;
                if (round >= 0) {
                    perCall[v][round] = dt / (double) reps;
                    cpu[v] += dc;
                    wall[v] += dt;
                }
            }
        }
        for (NDArray a : args) a.close();
        StringBuilder sb = new StringBuilder("\n")
                .append(head)
                .append(", ")
                .append(reps)
                .append(" calls per sample, ")
                .append(rounds)
                .append(" samples per variant, round-robin\n");
        sb.append(String.format(
                Locale.ROOT, "%-52s %12s %12s %10s %10s%n", "variant", "median", "best", "vs serial", "cores used"));
        double base = median(perCall[0]);
        for (int v = 0; v < vs.size(); v++) {
            double med = median(perCall[v]),
                    best = Arrays.stream(perCall[v]).min().orElse(0);
            sb.append(String.format(
                    Locale.ROOT,
                    "%-52s %12s %12s %9.2fx %10.2f%n",
                    vs.get(v).name(),
                    time(med),
                    time(best),
                    base / med,
                    cpu[v] / wall[v]));
        }
        return sb.toString();
    }

    private static double median(double[] a) {
        double[] s = a.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private static String time(double ns) {
        if (ns < 1e4) return String.format(Locale.ROOT, "%.0f ns", ns);
        if (ns < 1e7) return String.format(Locale.ROOT, "%.1f us", ns / 1e3);
        return String.format(Locale.ROOT, "%.2f ms", ns / 1e6);
    }
}
