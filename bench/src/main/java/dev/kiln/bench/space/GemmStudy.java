package dev.kiln.bench.space;

import dev.kiln.ir.DType;
import dev.kiln.ir.IterVar;
import dev.kiln.lower.Lowering;
import dev.kiln.samples.MatmulSchedules;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A study of where a tuned GEMM loses against a BLAS micro-kernel: times hand schedules that
 * differ in one structural choice (register tile, packing of A and B, K-blocking, loop order) next to
 * OpenBLAS in the same process, in interleaved passes (the best pass of each), and can write a
 * schedule's lowered loop nest and assembly. The optional filter keeps the variants whose name
 * contains it (for instance {@code kblock} for the K-blocking pairs, each with and without).
 *
 * <pre>java ... dev.kiln.bench.space.GemmStudy [n] [dump-dir or -] [passes] [filter]</pre>
 */
public final class GemmStudy {
    private GemmStudy() {}

    /** The GEMM {@code C[i,j] = sum_k A[i,k] B[k,j]}. */
    static ComputeDAG gemm(int n) {
        Tensor a = Te.placeholder("A", DType.FLOAT32, n, n);
        Tensor b = Te.placeholder("B", DType.FLOAT32, n, n);
        IterVar k = Te.reduceAxis(n, "k");
        return ComputeDAG.of(
                Te.compute("C", Te.shape(n, n), (i, j) -> Te.sum(k, a.at(i, k).mul(b.at(k, j)))));
    }

    /**
     * The structure the tuned programs take (cache write, SSRSRS, the local stage at the C tile's
     * j.1, i.0@j.0@i.1 parallel), with given tile sizes {@code i = [i1, i2, i3]}, {@code j}, k.1,
     * and A and/or B packed at the local stage's k.0.
     */
    static Schedule tunedShape(ComputeDAG dag, int[] i, int[] j, int k1, boolean packA, boolean packB) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("C");
        var local = c.cacheWrite("local");
        local.split("i", i[0], i[1], i[2]);
        local.split("j", j[0], j[1], j[2]);
        local.split("k", k1);
        local.reorder("i.0", "j.0", "i.1", "j.1", "k.0", "i.2", "j.2", "k.1", "i.3", "j.3");
        c.split("i", i[0], i[1] * i[2]);
        c.split("j", j[0], j[1] * j[2]);
        c.reorder("i.0", "j.0", "i.1", "j.1", "i.2", "j.2");
        local.computeAt(c, "j.1");
        c.parallel(c.fuse("i.0", "j.0", "i.1"));
        c.vectorize("j.2");
        local.autoUnrollMaxStep("i.0", 16);
        local.vectorize("j.3");
        for (String t : packA && packB
                ? new String[] {"A", "B"}
                : packA ? new String[] {"A"} : packB ? new String[] {"B"} : new String[0]) {
            var packed = s.stage(t).cacheRead("local", local);
            packed.computeAt(local, "k.0");
        }
        return s.build();
    }

    /**
     * The shape of the search's fusion-level-1 sketch (cache write, the local stage at the C tile's
     * j.0, i.0@j.0 parallel), tiled {@code i = [i1, i2, i3]}, {@code j}, k.1, with B packed at the local
     * stage's k.0 and A optionally too (at k.0, or at i.1 when K-blocked); K-blocked ({@code k.0} in
     * front of {@code i.1 j.1}, as {@code InitKBlocking} orders it: the packed KC x NC block of B
     * reused by every row block of the tile) or in Ansor's order ({@code k.0} after {@code i.1 j.1}).
     */
    static Schedule levelOneShape(ComputeDAG dag, int[] i, int[] j, int k1, boolean packA, boolean kBlock) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("C");
        var local = c.cacheWrite("local");
        local.split("i", i[0], i[1], i[2]);
        local.split("j", j[0], j[1], j[2]);
        local.split("k", k1);
        if (kBlock) local.reorder("i.0", "j.0", "k.0", "i.1", "j.1", "i.2", "j.2", "k.1", "i.3", "j.3");
        else local.reorder("i.0", "j.0", "i.1", "j.1", "k.0", "i.2", "j.2", "k.1", "i.3", "j.3");
        c.split("i", i[0] * i[1] * i[2]);
        c.split("j", j[0] * j[1] * j[2]);
        c.reorder("i.0", "j.0", "i.1", "j.1");
        local.computeAt(c, "j.0");
        c.parallel(c.fuse("i.0", "j.0"));
        c.vectorize("j.1");
        local.autoUnrollMaxStep("i.0", 16);
        local.vectorize("j.3");
        for (String t : packA ? new String[] {"B", "A"} : new String[] {"B"}) {
            // K-blocked, A's MC x KC block is packed per row block (i.1), inside the K block, as InitKBlocking puts it
            String at = t.equals("A") && kBlock ? "i.1" : "k.0";
            var copy = s.stage(t).cacheRead("local", local).computeAt(local, at);
            copy.vectorize(copy.loops().getLast()); // as InitVectorization does in the search
        }
        return s.build();
    }

    /**
     * The search's sketch without a cache write (C accumulated in place, as GotoBLAS updates C once per
     * KC block), tiled like {@link #levelOneShape}, B packed at k.0, i.0@j.0 parallel, K-blocked or not.
     */
    static Schedule rootShape(ComputeDAG dag, int[] i, int[] j, int k1, boolean kBlock) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("C");
        c.split("i", i[0], i[1], i[2]);
        c.split("j", j[0], j[1], j[2]);
        c.split("k", k1);
        if (kBlock) c.reorder("i.0", "j.0", "k.0", "i.1", "j.1", "i.2", "j.2", "k.1", "i.3", "j.3");
        else c.reorder("i.0", "j.0", "i.1", "j.1", "k.0", "i.2", "j.2", "k.1", "i.3", "j.3");
        var copy = s.stage("B").cacheRead("local", c).computeAt(c, "k.0");
        copy.vectorize(copy.loops().getLast());
        c.parallel(c.fuse("i.0", "j.0"));
        c.autoUnrollMaxStep("k.0", 16);
        c.vectorize("j.3");
        return s.build();
    }

    record Variant(String name, Schedule schedule) {}

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1024;
        Path dump = args.length > 1 && !args[1].equals("-") ? Path.of(args[1]) : null;
        int passes = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        String filter = args.length > 3 ? args[3] : "";
        CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true);
        System.out.println("target: " + target + "\nload before: " + Timing.loadAverage());
        ComputeDAG dag = gemm(n);
        double flops = dag.flopCount();
        List<Variant> vs = new ArrayList<>();
        vs.add(new Variant(
                "hand (MatmulSchedules 4x64, pack B)", MatmulSchedules.tiled(dag, MatmulSchedules.Tiles.avx512())));
        int[][][] shapes = {
            {{32, 2, 8}, {32, 1, 16}, {16}}, // the tuned best of a 64-trial run: 16 x 16 accumulated
            {{32, 2, 8}, {32, 1, 16}, {256}},
            {{16, 8, 8}, {8, 1, 32}, {256}}, // 8 x 32
            {{8, 4, 8}, {4, 2, 32}, {128}},
            {{16, 4, 4}, {4, 1, 64}, {256}}, // 4 x 64
            {{43, 4, 6}, {4, 1, 64}, {256}}, // 6 x 64 with a tail (1032 rows cover 1024; issue 13)
            {{43, 2, 12}, {8, 1, 32}, {256}}, // 12 x 32 with a tail
        };
        for (int[][] v : shapes) {
            for (int pack = 0; pack < 4; pack++) {
                boolean a = (pack & 1) != 0, b = (pack & 2) != 0;
                String name = String.format(
                        Locale.ROOT,
                        "i=%s j=%s k1=%d%s%s",
                        Arrays.toString(v[0]),
                        Arrays.toString(v[1]),
                        v[2][0],
                        a ? " packA" : "",
                        b ? " packB" : "");
                vs.add(new Variant(name, tunedShape(dag, v[0], v[1], v[2][0], a, b)));
            }
        }
        // K-blocking pairs (issue 13): the same tiles with k.0 after i.1 j.1 (Ansor's order) and in front of them
        int[][][] blocked = {
            {{16, 4, 4}, {4, 1, 64}, {256}}, // 256 x 256 tiles of 4 x 64 register tiles
            {{8, 4, 8}, {8, 1, 32}, {256}}, // 256 x 256 tiles of 8 x 32
            {{32, 4, 4}, {4, 1, 64}, {256}}, // 512 x 256 tiles: two row tiles per thread pair
            {{8, 4, 8}, {4, 2, 32}, {128}}, // 256 x 256, KC 128
        };
        for (int[][] v : blocked) {
            String tiles = String.format(
                    Locale.ROOT, "i=%s j=%s k1=%d", Arrays.toString(v[0]), Arrays.toString(v[1]), v[2][0]);
            for (boolean kb : new boolean[] {false, true}) {
                String tag = kb ? " kblock" : " kblock-off";
                vs.add(new Variant("L1 " + tiles + " packB" + tag, levelOneShape(dag, v[0], v[1], v[2][0], false, kb)));
                vs.add(new Variant(
                        "L1 " + tiles + " packA packB" + tag, levelOneShape(dag, v[0], v[1], v[2][0], true, kb)));
                vs.add(new Variant("root " + tiles + " packB" + tag, rootShape(dag, v[0], v[1], v[2][0], kb)));
            }
        }
        vs.removeIf(v -> !v.name().contains(filter));
        List<CompiledKernel> kernels = new ArrayList<>();
        for (Variant v : vs) {
            var func = Lowering.lower("gemm", v.schedule());
            CompiledKernel k = Backend.forTarget(target).compile(func, target);
            kernels.add(k);
            if (dump != null) {
                Files.createDirectories(dump);
                String tag = v.name().replaceAll("[^a-zA-Z0-9]+", "_");
                Files.writeString(dump.resolve(tag + ".tir"), func.toString());
                Files.writeString(dump.resolve(tag + ".s"), k.source());
            }
        }
        double[] best = new double[vs.size() + 1];
        Arrays.fill(best, Double.MAX_VALUE);
        for (int p = 0; p < passes; p++) {
            best[vs.size()] = Math.min(best[vs.size()], Timing.openBlas(n, target.cores()));
            for (int q = 0; q < vs.size(); q++) best[q] = Math.min(best[q], Timing.time(kernels.get(q), dag));
        }
        row("OpenBLAS", best[vs.size()], flops);
        for (int q = 0; q < vs.size(); q++) row(vs.get(q).name(), best[q], flops);
        kernels.forEach(CompiledKernel::close);
        System.out.println("load after: " + Timing.loadAverage() + " (best of " + passes
                + " interleaved passes, each a median of 11 calls)");
    }

    static void row(String name, double sec, double flops) {
        System.out.printf(Locale.ROOT, "%-55s %8.3f ms %7.1f GFLOP/s%n", name, sec * 1e3, flops / sec / 1e9);
    }

    static double time(Schedule s, CpuTarget target, Path dump, String tag) throws Exception {
        var func = Lowering.lower("gemm", s);
        try (CompiledKernel k = Backend.forTarget(target).compile(func, target)) {
            if (dump != null) {
                Files.createDirectories(dump);
                Files.writeString(dump.resolve(tag + ".tir"), func.toString());
                Files.writeString(dump.resolve(tag + ".s"), k.source());
                Files.writeString(dump.resolve(tag + ".steps"), s.toJavaSource());
            }
            return Timing.time(k, s.dag());
        }
    }
}
