package dev.kiln.jit.jvm;

import dev.kiln.ir.DType;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Conv;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Not a unit test: a same-process A/B driver for the JVM backend's code generation, to read what
 * HotSpot does with the generated code (run it with {@code -XX:+PrintCompilation} and friends) and
 * to compare generator variants in one process, alternating, so that machine noise hits both alike.
 *
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -cp ... \
 *     dev.kiln.jit.jvm.JvmHotLoops WORKLOAD ROUNDS CALLS VARIANT...
 * </pre>
 *
 * WORKLOAD: {@code gemmN} ({@code MatmulSchedules.tiled}'s AVX-512 tiles, copied here: 32 x 256
 * tiles, 4 x 64 register blocks, k in steps of 256, B packed), {@code conv} (the ResNet 3x3 64 -> 64
 * layer on 56 x 56 with BackendsBench's schedule) or {@code addN} (a parallel, vectorized add of N
 * floats: the parallel hand-off cost). A VARIANT is {@code name:prop=value,prop=value} (system
 * properties set while that variant compiles, e.g.
 * {@code old:kiln.jvm.reuseLoads=false,kiln.jvm.inlineDivision=false}); a variant whose name starts
 * with {@code llvm} compiles the same program with the LLVM backend for the host ({@code Target.cpu()}:
 * exact floating point, no FMA contraction, as BackendsBench).
 * Each round times CALLS calls of every variant in turn; the report gives each variant's median
 * over the rounds of its per-round median, and its ratio to the first variant. The outputs of all
 * variants are compared bit for bit.
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
            JvmBackend.clearCache();
            CompiledKernel k = parts[0].startsWith("llvm")
                    ? Backend.forTarget(Target.cpu()).compile(f, Target.cpu())
                    : new JvmBackend().compile(f, JvmTarget.jvm(threads));
            for (Map.Entry<String, String> e : saved.entrySet()) {
                if (e.getValue() == null) System.clearProperty(e.getKey());
                else System.setProperty(e.getKey(), e.getValue());
            }
            if (k instanceof JvmKernel j) {
                System.out.println("# " + parts[0] + ": " + j.compileTimes() + ", promotions " + j.promotions()
                        + ", notes " + j.notes());
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
        for (int r = 0; r < rounds; r++) {
            StringBuilder line = new StringBuilder("round " + r + ":");
            for (Map.Entry<String, CompiledKernel> e : kernels.entrySet()) {
                double[] t = new double[calls];
                for (int c = 0; c < calls; c++) {
                    long t0 = System.nanoTime();
                    e.getValue().call(a);
                    t[c] = (System.nanoTime() - t0) / 1e6;
                }
                if (r == 0) {
                    outputs.put(e.getKey(), a[a.length - 1].toFloatArray());
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
            if (!Arrays.equals(ref, e.getValue())) {
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
    }

    static double flops(String w) {
        if (w.startsWith("gemm")) {
            double n = Long.parseLong(w.substring(4));
            return 2 * n * n * n;
        }
        if (w.startsWith("add")) return Long.parseLong(w.substring(3));
        return 2.0 * 56 * 56 * 64 * 64 * 9;
    }

    static Schedule schedule(String w) {
        if (w.startsWith("gemm")) return gemm(Integer.parseInt(w.substring(4)));
        if (w.startsWith("add")) return add(Integer.parseInt(w.substring(3)));
        if (w.equals("conv")) return conv();
        throw new KilnException("unknown workload '" + w + "' (gemmN, addN or conv)");
    }

    /** {@code MatmulSchedules.tiled(dag, Tiles.avx512())} (samples), copied: jit cannot depend on samples. */
    static Schedule gemm(int n) {
        Tensor x = Te.placeholder("A", DType.FLOAT32, n, n), y = Te.placeholder("B", DType.FLOAT32, n, n);
        IterVar k = Te.reduceAxis(n, "k");
        ComputeDAG dag = ComputeDAG.of(
                Te.compute("C", Te.shape(n, n), (i, j) -> Te.sum(k, x.at(i, k).mul(y.at(k, j)))));
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("C");
        var local = c.cacheWrite("local");
        c.split("i", 32);
        c.split("j", 256);
        c.reorder("i.0", "j.0", "i.1", "j.1");
        local.computeAt(c, "j.0");
        c.parallel(c.fuse("i.0", "j.0"));
        c.vectorize("j.1");
        local.split("i", 4);
        local.split("j", 64);
        local.split("k", 256);
        local.reorder("k.0", "i.0", "j.0", "k.1", "i.1", "j.1");
        local.unroll("i.1");
        local.vectorize("j.1");
        var packed = s.stage("B").cacheRead("local", local);
        packed.computeAt(local, "k.0");
        packed.vectorize(packed.loops().get(1));
        return s.build();
    }

    /** BackendsBench's conv2d schedule: padding inlined, rows parallel, output channels vectorized. */
    static Schedule conv() {
        Tensor data = Te.placeholder("data", DType.FLOAT32, 1, 56, 56, 64);
        Tensor weight = Te.placeholder("weight", DType.FLOAT32, 3, 3, 64, 64);
        ComputeDAG dag = ComputeDAG.of(Conv.conv2dNhwc(data, weight, 1, 1));
        ScheduleBuilder b = ScheduleBuilder.on(dag);
        b.stage("pad").computeInline();
        var conv = b.stage(dag.outputs().get(0));
        var loops = conv.loops();
        conv.reorder(loops.get(0), loops.get(1), loops.get(2), loops.get(4), loops.get(5), loops.get(6), loops.get(3));
        conv.parallel(loops.get(1));
        conv.vectorize(loops.get(3));
        return b.build();
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
