package dev.kiln.bench.space;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.FactorizationMemo;
import dev.kiln.autoschedule.annotate.InitFillTileSize;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.evolution.EvolutionOptions;
import dev.kiln.autoschedule.evolution.EvolutionarySearchPolicy;
import dev.kiln.autoschedule.model.GbdtCostModel;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.lower.Lowering;
import dev.kiln.samples.MatmulSchedules;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Ansor's CPU search space against Kiln's (issue 13) on GEMM n, in one process: the same
 * evolutionary search, cost model, seed and trial budget over (a) Ansor's sketches with uniform
 * tile sizes and Ansor's vectorisation limit and (b) Kiln's sketches (packing,
 * {@code AddCacheReadPack}) with register-tile sampling ({@code RegisterTileSizes}) and wide
 * register-tile rows vectorised ({@code InitVectorization}); then the two best programs, the hand schedule and
 * OpenBLAS re-timed in interleaved passes (best of the passes, each a median of 11 calls).
 *
 * <pre>SpaceBench [n] [trials] [seed] [log-dir]</pre>
 * (defaults 1024, 200, 7, kiln-bench/space; the logs resume).
 */
public final class SpaceBench {
    private SpaceBench() {}

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1024;
        int trials = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        long seed = args.length > 2 ? Long.parseLong(args[2]) : 7;
        Path dir = Path.of(args.length > 3 ? args[3] : "kiln-bench/space");
        Files.createDirectories(dir);
        CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true);
        System.out.println("target: " + target);
        ComputeDAG dag = GemmStudy.gemm(n);
        double flops = dag.flopCount();
        List<String> names = new ArrayList<>();
        List<Schedule> schedules = new ArrayList<>();
        for (boolean kiln : new boolean[] {false, true}) {
            String space = kiln ? "kiln" : "ansor";
            System.out.println(space + " space: load before " + Timing.loadAverage());
            TuneOptions opts = TuneOptions.builder()
                    .trials(trials)
                    .seed(seed)
                    .progressBar(false)
                    .logFile(dir.resolve("gemm" + n + "-" + space + "-seed" + seed + ".jsonl"))
                    .policy((task, s) -> policy(task, s, kiln))
                    .build();
            long t0 = System.nanoTime();
            try (TuneResult r = AutoSchedule.tune(dag, target, opts)) {
                System.out.printf(
                        Locale.ROOT, "%s space: %s; %.0f s%n", space, r.summary(), (System.nanoTime() - t0) / 1e9);
                names.add("tuned, " + space + " space, " + trials + " trials (search: "
                        + String.format(Locale.ROOT, "%.1f", r.gflops()) + " GFLOP/s)");
                schedules.add(r.schedule());
            }
            System.out.println(space + " space: load after " + Timing.loadAverage());
        }
        names.add("hand schedule (MatmulSchedules.avx512)");
        schedules.add(MatmulSchedules.tiled(dag, MatmulSchedules.Tiles.avx512()));
        List<CompiledKernel> kernels = new ArrayList<>();
        for (Schedule s : schedules) kernels.add(Backend.forTarget(target).compile(Lowering.lower("gemm", s), target));
        System.out.println("re-timing: load before " + Timing.loadAverage());
        double[] best = new double[schedules.size() + 1];
        Arrays.fill(best, Double.MAX_VALUE);
        for (int p = 0; p < 5; p++) {
            best[schedules.size()] = Math.min(best[schedules.size()], Timing.openBlas(n, target.cores()));
            for (int q = 0; q < kernels.size(); q++) best[q] = Math.min(best[q], Timing.time(kernels.get(q), dag));
        }
        System.out.println("re-timing: load after " + Timing.loadAverage());
        kernels.forEach(CompiledKernel::close);
        System.out.println("| GEMM " + n + " | ms | GFLOP/s | / OpenBLAS |");
        System.out.println("|---|---|---|---|");
        double blas = best[schedules.size()];
        for (int q = 0; q <= schedules.size(); q++) {
            String name = q < schedules.size() ? names.get(q) : "OpenBLAS sgemm, " + target.cores() + " threads";
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %.3f | %.1f | %.2fx |%n",
                    name,
                    best[q] * 1e3,
                    flops / best[q] / 1e9,
                    blas / best[q]);
        }
        for (int q = 0; q < 2; q++)
            System.out.println(names.get(q) + ":\n" + schedules.get(q).toJavaSource());
    }

    /** The default evolutionary policy over Ansor's space or Kiln's. */
    static EvolutionarySearchPolicy policy(SearchTask task, long seed, boolean kiln) {
        TargetRules rules = kiln ? TargetRules.cpu() : TargetRules.ansorCpu();
        var fill = new InitFillTileSize(
                new FactorizationMemo(), kiln ? InitFillTileSize.DEFAULT_REGISTER_TILE_PROBABILITY : 0);
        var sampler = new InitPopulation(
                task, rules.sketches(task), rules.initRules(), fill, InitPopulation.DEFAULT_MAX_FRUITLESS_DRAWS);
        return new EvolutionarySearchPolicy(
                task, sampler, rules.mutations(), GbdtCostModel.defaults(seed), EvolutionOptions.defaults(), seed);
    }
}
