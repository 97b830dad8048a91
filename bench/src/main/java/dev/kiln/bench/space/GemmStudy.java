package dev.kiln.bench.space;


import dev.kiln.ir.DType;
import dev.kiln.samples.MatmulSchedules;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.ir.IterVar;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * A study of where a tuned GEMM loses against a BLAS micro-kernel: times hand schedules that
 * differ in one structural choice (register tile, packing of B, k blocking, loop order) next to
 * OpenBLAS in the same process, and can write a schedule's lowered loop nest and assembly.
 *
 * <pre>java ... dev.kiln.bench.space.GemmStudy [n] [dump-dir]</pre>
 */
public final class GemmStudy {
    private GemmStudy() {}

    /** The GEMM {@code C[i,j] = sum_k A[i,k] B[k,j]}. */
    static ComputeDAG gemm(int n) {
        Tensor a = Te.placeholder("A", DType.FLOAT32, n, n);
        Tensor b = Te.placeholder("B", DType.FLOAT32, n, n);
        IterVar k = Te.reduceAxis(n, "k");
        return ComputeDAG.of(Te.compute("C", Te.shape(n, n), (i, j) -> Te.sum(k, a.at(i, k).mul(b.at(k, j)))));
    }

    /**
     * The SSRSRS + cache-write structure the sketches produce, with chosen tile sizes:
     * C.local tiled i.0 j.0 i.1 j.1 k.0 i.2 j.2 k.1 i.3 j.3 (i.3 unrolled, j.3 vectorised), C
     * tiled at the first two levels and the local stage computed at its j.1, outer loops fused
     * and parallel; optionally B packed per (tile, k.0).
     */
    static Schedule ssrsrs(ComputeDAG dag, int[] i, int[] j, int kInner, boolean packB, int unroll) {
        return ssrsrs(dag, i, j, kInner, packB, unroll, true);
    }

    static Schedule ssrsrs(ComputeDAG dag, int[] i, int[] j, int kInner, boolean packB, int unroll, boolean unrollRows) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("C");
        var local = c.cacheWrite("local");
        local.split("i", i[0], i[1], i[2]);
        local.split("j", j[0], j[1], j[2]);
        local.split("k", kInner);
        local.reorder("i.0", "j.0", "i.1", "j.1", "k.0", "i.2", "j.2", "k.1", "i.3", "j.3");
        c.split("i", i[0] * i[1] * i[2]);
        c.split("j", j[0] * j[1] * j[2]);
        c.reorder("i.0", "j.0", "i.1", "j.1");
        local.computeAt(c, "j.0");
        c.parallel(c.fuse("i.0", "j.0"));
        c.vectorize("j.1");
        if (unrollRows) local.unroll("i.3");
        local.vectorize("j.3");
        if (unroll > 0) local.autoUnrollMaxStep("i.0", unroll);
        if (packB) {
            var packed = s.stage("B").cacheRead("local", local);
            packed.computeAt(local, "k.0");
            packed.vectorize(packed.loops().get(packed.loops().size() - 1));
        }
        return s.build();
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1024;
        Path dump = args.length > 1 ? Path.of(args[1]) : null;
        CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true);
        System.out.println("target: " + target + "\nload before: " + Timing.loadAverage());
        ComputeDAG dag = gemm(n);
        double flops = dag.flopCount();
        double blas = Timing.openBlas(n, target.cores());
        row("OpenBLAS", blas, flops);
        row("hand (MatmulSchedules 4x64, pack B)", time(MatmulSchedules.tiled(dag, MatmulSchedules.Tiles.avx512()), target, dump, "hand"), flops);
        for (int u : new int[] {0, 64, 512}) {
            row("ssrsrs [2,4,8]x[4,2,32] k1=512, rows not unrolled, auto_unroll " + u,
                    time(ssrsrs(dag, new int[] {2, 4, 8}, new int[] {4, 2, 32}, 512, false, u, false), target, dump, "norows" + u), flops);
        }
        // tile sizes: i = {tiles per core level.., register rows}, j likewise; k.1 = k block
        int[][][] variants = {
                {{8, 1, 4}, {4, 1, 64}, {256}},     // 4x64 register tile, 32x256 C tile
                {{8, 1, 6}, {4, 1, 64}, {256}},     // 6x64 (24 zmm)
                {{4, 2, 8}, {2, 2, 48}, {256}},     // 8x48 (24 zmm)
                {{4, 4, 14}, {4, 1, 32}, {256}},    // does not divide 1024; skipped below
                {{4, 2, 4}, {2, 2, 64}, {128}},
                {{8, 1, 8}, {8, 1, 32}, {256}},     // 8x32 (16 zmm)
                {{2, 4, 8}, {4, 2, 32}, {512}},
        };
        for (int[][] v : variants) {
            if (n % (v[0][0] * v[0][1] * v[0][2]) != 0 || n % (v[1][0] * v[1][1] * v[1][2]) != 0) continue;
            for (boolean pack : new boolean[] {false, true}) {
                String name = String.format(Locale.ROOT, "ssrsrs i=%s j=%s k1=%d%s", java.util.Arrays.toString(v[0]),
                        java.util.Arrays.toString(v[1]), v[2][0], pack ? " packB" : "");
                try {
                    double t = time(ssrsrs(dag, v[0], v[1], v[2][0], pack, 0), target, dump,
                            name.replaceAll("[^a-zA-Z0-9]+", "_"));
                    row(name, t, flops);
                } catch (RuntimeException e) {
                    System.out.println(name + ": " + e.getMessage());
                }
            }
        }
        System.out.println("load after: " + Timing.loadAverage());
    }

    static void row(String name, double sec, double flops) {
        System.out.printf(Locale.ROOT, "%-55s %8.3f ms %7.1f GFLOP/s%n", name, sec * 1e3, flops / sec / 1e9);
    }

    static double time(Schedule s, CpuTarget target, Path dump, String tag) throws Exception {
        var func = s.lower("gemm");
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
