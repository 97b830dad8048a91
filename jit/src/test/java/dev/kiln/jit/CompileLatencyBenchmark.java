package dev.kiln.jit;

import dev.kiln.ir.DType;
import dev.kiln.ir.IterVar;
import dev.kiln.lower.LowerDefault;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * Compile latency: LLVM compiles of distinct programs (each a cache miss), split into IR
 * generation, parsing, optimisation and machine-code generation, for a small elementwise kernel,
 * a default-lowered matmul and the vectorized parallel matmul of the runtime benchmark; and the
 * cost of a cache hit. Not part of the test suite; run with
 * {@code ./kiln mvn verify -pl jit -am -Dtest=CompileLatencyBenchmark -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class CompileLatencyBenchmark {
    /** A naive n x n x n float32 matmul, lowered by default (shared with ConcurrentCompileTest). */
    static PrimFunc mm(int n) {
        Tensor a = Te.placeholder("A", DType.FLOAT32, n, n), b = Te.placeholder("B", DType.FLOAT32, n, n);
        IterVar k = Te.reduceAxis(n, "k");
        return LowerDefault.lower(
                "mm",
                ComputeDAG.of(Te.compute(
                        "C", Te.shape(n, n), (i, j) -> Te.sum(k, a.at(i, k).mul(b.at(k, j))))));
    }

    private static PrimFunc add(int n) {
        Tensor a = Te.placeholder("A", DType.FLOAT32, n), b = Te.placeholder("B", DType.FLOAT32, n);
        return LowerDefault.lower(
                "add", ComputeDAG.of(Te.compute("C", Te.shape(n), i -> a.at(i).add(b.at(i)))));
    }

    @Test
    void run() throws Exception {
        StringBuilder sb = new StringBuilder("compile latency (ms), loadavg ")
                .append(Files.readString(Path.of("/proc/loadavg")).trim())
                .append('\n');
        JitCheck.BACKEND.compile(add(3), JitCheck.TARGET).close(); // LLVM load and JIT creation
        sb.append(String.format(
                Locale.ROOT,
                "%-40s %8s %8s %8s %8s %8s %8s %8s%n",
                "program (20 distinct sizes)",
                "total",
                "generate",
                "parse",
                "optimise",
                "codegen",
                "link",
                "wall"));
        sb.append(row("add, default lowering", 20, CompileLatencyBenchmark::add));
        sb.append(row("matmul, default lowering", 20, CompileLatencyBenchmark::mm));
        sb.append(row(
                "matmul, parallel+vectorized (i-k-j)", 20, n -> ParallelRuntimeBenchmark.matmul(n, ForKind.PARALLEL)));
        OrcJit.codegenInLock = true;
        try {
            sb.append(row(
                    "  same, codegen at the link (in the lock)",
                    20,
                    n -> ParallelRuntimeBenchmark.matmul(n + 1, ForKind.PARALLEL)));
        } finally {
            OrcJit.codegenInLock = false;
        }
        PrimFunc f = mm(64);
        JitCheck.BACKEND.compile(f, JitCheck.TARGET).close();
        int hits = 2000;
        long t0 = System.nanoTime();
        for (int i = 0; i < hits; i++)
            JitCheck.BACKEND.compile(f, JitCheck.TARGET).close();
        double hitUs = (System.nanoTime() - t0) / 1e3 / hits;
        PrimFunc f2 = mm(64);
        t0 = System.nanoTime();
        for (int i = 0; i < hits; i++)
            JitCheck.BACKEND.compile(f2, JitCheck.TARGET).close();
        sb.append(String.format(
                Locale.ROOT,
                "cache hit (same PrimFunc object / an equal one): %.1f us / %.1f us%n",
                hitUs,
                (System.nanoTime() - t0) / 1e3 / hits));
        sb.append(cpuTimes());
        sb.append(parallelBuild());
        sb.append("loadavg after ")
                .append(Files.readString(Path.of("/proc/loadavg")).trim())
                .append('\n');
        System.out.println(sb);
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target/compile-latency-benchmark.txt"), sb.toString());
    }

    /**
     * CPU time of the compiling thread (less disturbed by load than wall time) for distinct
     * vectorized parallel matmuls, the old path and the new one alternating: does emitting the
     * object file outside ORC cost more than ORC's own code generation? Medians of 20 each.
     */
    private static String cpuTimes() {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        List<List<Double>> ms = List.of(new ArrayList<>(), new ArrayList<>());
        boolean before = OrcJit.codegenInLock;
        try {
            for (int i = 0; i < 40; i++) {
                OrcJit.codegenInLock = i % 2 == 0;
                PrimFunc f = ParallelRuntimeBenchmark.matmul(3000 + i, ForKind.PARALLEL);
                long c0 = mx.getCurrentThreadCpuTime();
                JitCheck.BACKEND.compile(f, JitCheck.TARGET).close();
                ms.get(i % 2).add((mx.getCurrentThreadCpuTime() - c0) / 1e6);
            }
        } finally {
            OrcJit.codegenInLock = before;
        }
        double[] med = ms.stream()
                .mapToDouble(l -> l.stream().mapToDouble(x -> x).sorted().toArray()[l.size() / 2])
                .toArray();
        return String.format(
                Locale.ROOT,
                "compile CPU time of the calling thread, parallel+vectorized matmul, median of 20:"
                        + " codegen in the lock %.1f ms, outside it %.1f ms%n",
                med[0],
                med[1]);
    }

    /**
     * Parallel build throughput, A/B in this process: batches of distinct vectorized parallel matmuls
     * compiled on 1 and 2 threads with machine code generated at the link under the JIT's lock (the
     * old path) and outside it, the four configurations interleaved over rounds; median programs/s.
     */
    private static String parallelBuild() throws Exception {
        int batch = 10, rounds = 5;
        int[] threads = {1, 2};
        boolean[] inLock = {true, false};
        List<List<Double>> rates = new ArrayList<>();
        for (int c = 0; c < 4; c++) rates.add(new ArrayList<>());
        int size = 2000;
        boolean before = OrcJit.codegenInLock;
        try {
            for (int r = 0; r < rounds; r++) {
                for (int c = 0; c < 4; c++) {
                    OrcJit.codegenInLock = inLock[c % 2];
                    List<PrimFunc> fs = new ArrayList<>();
                    for (int i = 0; i < batch; i++) fs.add(ParallelRuntimeBenchmark.matmul(size++, ForKind.PARALLEL));
                    java.util.concurrent.ExecutorService pool =
                            java.util.concurrent.Executors.newFixedThreadPool(threads[c / 2]);
                    long t0 = System.nanoTime();
                    List<java.util.concurrent.Future<?>> done = new ArrayList<>();
                    for (PrimFunc f : fs)
                        done.add(pool.submit(() ->
                                JitCheck.BACKEND.compile(f, JitCheck.TARGET).close()));
                    for (java.util.concurrent.Future<?> d : done) d.get();
                    rates.get(c).add(batch / ((System.nanoTime() - t0) / 1e9));
                    pool.shutdown();
                }
            }
        } finally {
            OrcJit.codegenInLock = before;
        }
        StringBuilder sb = new StringBuilder(String.format(
                Locale.ROOT,
                "parallel build, %d distinct parallel+vectorized matmuls per batch, %d rounds, median programs/s%n",
                batch,
                rounds));
        for (int c = 0; c < 4; c++) {
            double med = rates.get(c).stream().mapToDouble(x -> x).sorted().toArray()[rounds / 2];
            sb.append(String.format(
                    Locale.ROOT,
                    "  %d thread(s), codegen %-13s %6.1f  (rounds %s)%n",
                    threads[c / 2],
                    inLock[c % 2] ? "in the lock" : "outside it",
                    med,
                    rates.get(c).stream()
                            .map(x -> String.format(Locale.ROOT, "%.1f", x))
                            .toList()));
        }
        return sb.toString();
    }

    private static String row(String name, int count, java.util.function.IntFunction<PrimFunc> make) {
        List<double[]> t = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            PrimFunc f = make.apply(64 + 16 * i);
            long t0 = System.nanoTime();
            LlvmKernel k = JitCheck.BACKEND.compile(f, JitCheck.TARGET);
            double wall = (System.nanoTime() - t0) / 1e6;
            CompileTimes c = k.code().module.times();
            t.add(new double[] {
                k.code().generateMs + c.totalMs(),
                k.code().generateMs,
                c.parseMs(),
                c.optimizeMs(),
                c.codegenMs(),
                c.linkMs(),
                wall
            });
            k.close();
        }
        double[] med = new double[7];
        for (int j = 0; j < 7; j++) {
            final int jj = j;
            med[j] = t.stream().mapToDouble(x -> x[jj]).sorted().toArray()[count / 2];
        }
        return String.format(
                Locale.ROOT,
                "%-40s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f%n",
                name + " (median)",
                med[0],
                med[1],
                med[2],
                med[3],
                med[4],
                med[5],
                med[6]);
    }
}
