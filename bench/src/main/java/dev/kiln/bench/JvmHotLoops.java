package dev.kiln.bench;

import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.jit.jvm.JvmBackend;
import dev.kiln.jit.jvm.JvmKernel;
import dev.kiln.jit.jvm.JvmTarget;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.samples.MatmulSchedules;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ForkJoinPool;

/**
 * A same-process A/B driver for the JVM backend's code generation, to read what HotSpot does with the
 * generated code (run it with {@code -XX:+PrintCompilation} and friends) and to compare generator
 * variants in one process, alternating, so that machine noise hits all alike.
 *
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *     -cp bench/target/classes:$(cat bench/target/classpath.txt) \
 *     dev.kiln.bench.JvmHotLoops WORKLOAD ROUNDS CALLS VARIANT...
 * </pre>
 *
 * WORKLOAD: {@code gemmN} ({@code MatmulSchedules.tiled} with the AVX-512 tiles, as {@link BackendsBench}
 * at N = 1024), {@code conv} ({@link BackendsBench}'s register-tiled ResNet 3x3 64 -> 64 conv on 56 x 56),
 * {@code conv-naive} (its old 1-pixel schedule) or {@code addN} (a parallel, vectorized add of N floats:
 * the parallel hand-off cost). A VARIANT is {@code name:prop=value,prop=value} (system properties set
 * while that variant compiles, e.g. {@code old:kiln.jvm.reuseLoads=false,kiln.jvm.inlineDivision=false});
 * a variant whose name starts with {@code llvm} compiles the same program with the LLVM backend for the
 * host ({@code Target.cpu()}: exact floating point, no FMA contraction, as BackendsBench); one named
 * {@code vector-api} runs the plain-Java baseline ({@link VectorGemm} or {@link VectorConv}) on the same
 * inputs. Each round times CALLS calls of every variant in turn; the report gives each variant's median
 * over the rounds of its per-round median, and its ratio to the first variant. The outputs of all Kiln
 * variants are compared bit for bit, the baseline's and those of variants whose name contains {@code fma} (compiled
 * for a fast-math JVM target: {@code a * b + c} as one FMA) within 1e-3 relative. {@code gemmN@LOG} replays the best
 * record of a tuning log, {@code gemmN@LOG#L} its line L; with {@code -Dkiln.hot.tune=T} the first tunes into LOG
 * first ({@link #tuned}).
 */
public final class JvmHotLoops {
    private JvmHotLoops() {}

    public static void main(String[] argv) {
        if (argv.length < 4) {
            throw new KilnException("usage: JvmHotLoops WORKLOAD ROUNDS CALLS VARIANT... (see the class comment)");
        }
        String workload = argv[0];
        int rounds = Integer.parseInt(argv[1]), calls = Integer.parseInt(argv[2]);
        int threads =
                Integer.getInteger("kiln.hot.threads", Runtime.getRuntime().availableProcessors());
        Schedule s = schedule(workload);
        PrimFunc f = Lowering.lower(workload, s);
        if (Boolean.getBoolean("kiln.hot.print")) System.out.println(f);
        Map<String, CompiledKernel> kernels = new LinkedHashMap<>();
        for (int v = 3; v < argv.length; v++) {
            String[] parts = argv[v].split(":", 2);
            Map<String, String> saved = new LinkedHashMap<>();
            if (parts.length > 1 && !parts[1].isEmpty()) {
                for (String kv : parts[1].split(",")) {
                    String[] p = kv.split("=", 2);
                    saved.put(p[0], System.getProperty(p[0]));
                    System.setProperty(p[0], p[1]);
                }
            }
            if (parts[0].equals("vector-api")) {
                kernels.put(parts[0], null);
                continue;
            }
            JvmBackend.clearCache();
            CompiledKernel k = parts[0].startsWith("llvm")
                    ? Backend.forTarget(Target.cpu()).compile(f, Target.cpu())
                    : new JvmBackend().compile(f, JvmTarget.jvm(threads).withFastMath(parts[0].contains("fma")));
            for (Map.Entry<String, String> e : saved.entrySet()) {
                if (e.getValue() == null) System.clearProperty(e.getKey());
                else System.setProperty(e.getKey(), e.getValue());
            }
            if (k instanceof JvmKernel j) {
                System.out.println("# " + parts[0] + ": " + j.compileTimes() + ", promotions " + j.promotions()
                        + ", notes " + j.notes() + "; " + JvmBackend.c1State());
            }
            if (Boolean.getBoolean("kiln.hot.source")) System.out.println(k.source());
            kernels.put(parts[0], k);
        }
        double flops = flops(workload);
        List<NDArray> args = new ArrayList<>();
        int seed = 1;
        for (Tensor t : s.dag().arguments()) {
            args.add(
                    t.isPlaceholder()
                            ? NDArray.random(t.dtype(), seed++, t.shape().toArray())
                            : NDArray.allocate(t.dtype(), t.shape().toArray()));
        }
        NDArray[] a = args.toArray(NDArray[]::new);
        Map<String, double[]> medians = new LinkedHashMap<>();
        Map<String, float[]> outputs = new LinkedHashMap<>();
        for (String name : kernels.keySet()) medians.put(name, new double[rounds]);
        Baseline baseline = kernels.containsKey("vector-api") ? new Baseline(workload, a, threads) : null;
        for (int r = 0; r < rounds; r++) {
            StringBuilder line = new StringBuilder("round " + r + ":");
            for (Map.Entry<String, CompiledKernel> e : kernels.entrySet()) {
                double[] t = new double[calls];
                for (int c = 0; c < calls; c++) {
                    long t0 = System.nanoTime();
                    if (e.getValue() == null) baseline.run();
                    else e.getValue().call(a);
                    t[c] = (System.nanoTime() - t0) / 1e6;
                }
                if (r == 0) {
                    outputs.put(e.getKey(), e.getValue() == null ? baseline.out : a[a.length - 1].toFloatArray());
                    if (Boolean.getBoolean("kiln.hot.firstCalls")) {
                        System.out.println("# first calls of " + e.getKey() + " (ms): "
                                + Arrays.toString(Arrays.copyOf(t, Math.min(calls, 12))));
                    }
                }
                Arrays.sort(t);
                medians.get(e.getKey())[r] = t[calls / 2];
                line.append(String.format(Locale.ROOT, "  %s %.4f ms", e.getKey(), t[calls / 2]));
            }
            System.out.println(line);
        }
        float[] ref = outputs.values().iterator().next();
        for (Map.Entry<String, float[]> e : outputs.entrySet()) {
            if (e.getKey().equals("vector-api") || e.getKey().contains("fma")) {
                for (int i = 0; i < ref.length; i++) {
                    if (Math.abs(ref[i] - e.getValue()[i]) > 1e-3f * Math.max(1f, Math.abs(ref[i]))) {
                        throw new AssertionError(e.getKey() + " differs from the first variant at element " + i + ": "
                                + e.getValue()[i] + " vs " + ref[i]);
                    }
                }
            } else if (!Arrays.equals(ref, e.getValue())) {
                throw new AssertionError("variant " + e.getKey() + " computes a different output than the first");
            }
        }
        double base = 0;
        for (Map.Entry<String, double[]> e : medians.entrySet()) {
            double[] m = e.getValue().clone();
            // the first half of the rounds is warm-up: HotSpot compiles while they run
            double[] tail = Arrays.copyOfRange(m, rounds / 2, rounds);
            Arrays.sort(tail);
            double med = tail[tail.length / 2];
            if (base == 0) base = med;
            System.out.printf(
                    Locale.ROOT,
                    "%-10s median of rounds %d..%d: %.4f ms  %.1f GFLOP/s  time / %s: %.3f%n",
                    e.getKey(),
                    rounds / 2,
                    rounds - 1,
                    med,
                    flops / med / 1e6,
                    kernels.keySet().iterator().next(),
                    med / base);
        }
        for (NDArray x : a) x.close();
        if (baseline != null) baseline.pool.shutdown();
    }

    /** The plain-Java baseline on copies of the Kiln variants' inputs. */
    private static final class Baseline {
        final boolean gemm;
        final int n;
        final float[] x, y, out, packed;
        final ForkJoinPool pool;

        Baseline(String workload, NDArray[] a, int threads) {
            if (!workload.startsWith("gemm") && !workload.startsWith("conv")) {
                throw new KilnException("vector-api has no baseline for workload '" + workload + "'");
            }
            gemm = workload.startsWith("gemm");
            n = gemm ? Integer.parseInt(workload.substring(4).split("@")[0]) : 0;
            x = a[0].toFloatArray();
            y = a[1].toFloatArray();
            out = new float[(int) a[a.length - 1].numElements()];
            packed = new float[gemm ? n * n : 0];
            pool = new ForkJoinPool(threads);
        }

        void run() {
            if (gemm) VectorGemm.gemm(x, y, out, n, n, n, packed, pool);
            else VectorConv.conv2d(x, y, out, BackendsBench.RESNET_CONV, pool);
        }
    }

    static double flops(String w) {
        if (w.startsWith("gemm")) {
            double n = Long.parseLong(w.substring(4).split("@")[0]);
            return 2 * n * n * n;
        }
        if (w.startsWith("add")) return Long.parseLong(w.substring(3));
        return 2.0 * 56 * 56 * 64 * 64 * 9;
    }

    static Schedule schedule(String w) {
        if (w.contains("@")) return logged(w);
        if (w.startsWith("gemm")) {
            int n = Integer.parseInt(w.substring(4));
            return MatmulSchedules.tiled(MatmulBench.matmul(n), MatmulSchedules.Tiles.avx512());
        }
        if (w.startsWith("add")) return add(Integer.parseInt(w.substring(3)));
        if (w.equals("conv")) return BackendsBench.conv2dSchedule();
        if (w.equals("conv-naive")) return BackendsBench.conv2dNaiveSchedule();
        throw new KilnException("unknown workload '" + w + "' (gemmN, addN, conv or conv-naive)");
    }

    /**
     * {@code gemmN@LOG}: the best record in tuning log LOG for GEMM N on {@code Target.jvm()};
     * {@code gemmN@LOG#L}: the record on line L (from 1) of LOG.
     */
    static Schedule logged(String w) {
        String[] parts = w.split("@", 2);
        ComputeDAG dag = MatmulBench.matmul(Integer.parseInt(parts[0].substring(4)));
        String[] file = parts[1].split("#", 2);
        Path log = Path.of(file[0]);
        int tune = Integer.getInteger("kiln.hot.tune", 0);
        if (file.length == 1 && tune > 0) return tuned(dag, log, tune);
        if (file.length == 1) return AutoSchedule.bestSchedule(dag, Target.jvm(), log);
        try (TuningLog l = TuningLog.open(log)) {
            int line = Integer.parseInt(file[1]);
            List<LogRecord> records = l.records();
            if (line < 1 || line > records.size()) {
                throw new KilnException("log " + log + " has " + records.size() + " records, not a line " + line);
            }
            LogRecord r = records.get(line - 1);
            System.out.println("# record " + line + ": " + r.steps() + ", costs " + r.costs());
            return r.schedule(dag);
        }
    }

    /**
     * {@code -Dkiln.hot.tune=T} with {@code gemmN@LOG}: tunes GEMM N on {@code Target.jvm()} into LOG first, up to T
     * trials in all (the log's count; seed 7, as BackendsBench's {@code jvm-tuned}), and prints the search's summary
     * and wall time; {@code -Dkiln.search.jvmRules=false} tunes with the CPU target's rules instead of the JVM's
     * ({@code TargetRules.jvm()}), for a before/after comparison of the search.
     */
    static Schedule tuned(ComputeDAG dag, Path log, int trials) {
        long t0 = System.nanoTime();
        TuneOptions opts =
                TuneOptions.builder().trials(trials).seed(7).logFile(log).build();
        try (TuneResult r = AutoSchedule.tune(dag, Target.jvm(), opts)) {
            System.out.printf(
                    "# tuned on the JVM target (%s rules) in %.0f s: %s%n",
                    "false".equals(System.getProperty("kiln.search.jvmRules")) ? "CPU" : "JVM",
                    (System.nanoTime() - t0) / 1e9,
                    r.summary());
            return r.schedule();
        } catch (Exception e) {
            throw new KilnException("tuning GEMM on the JVM target into " + log + " failed: " + e.getMessage(), e);
        }
    }

    /** {@code C = A + B} over n floats, in parallel blocks of 1024, vectorized inside. */
    static Schedule add(int n) {
        Tensor x = Te.placeholder("A", DType.FLOAT32, n), y = Te.placeholder("B", DType.FLOAT32, n);
        ComputeDAG dag = ComputeDAG.of(Te.compute("C", Te.shape(n), i -> x.at(i).add(y.at(i))));
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("C");
        var parts = c.split("i", 1024);
        c.parallel(parts.get(0));
        c.vectorize(parts.get(1));
        return s.build();
    }
}
