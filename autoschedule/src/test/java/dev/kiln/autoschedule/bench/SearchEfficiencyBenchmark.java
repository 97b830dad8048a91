package dev.kiln.autoschedule.bench;

import dev.kiln.autoschedule.AutoSchedule;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.evolution.EvolutionOptions;
import dev.kiln.autoschedule.evolution.EvolutionarySearchPolicy;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.measure.ProcessMeasurer;
import dev.kiln.autoschedule.model.RandomCostModel;
import dev.kiln.autoschedule.progress.TuneProgress;
import dev.kiln.autoschedule.search.RandomSearchPolicy;
import dev.kiln.autoschedule.search.SearchLimits;
import dev.kiln.autoschedule.search.SearchLoop;
import dev.kiln.autoschedule.search.SearchOutcome;
import dev.kiln.autoschedule.search.SearchPolicy;
import dev.kiln.autoschedule.sketch.SketchGenerator;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Search efficiency (issue 6), not part of the test suite: the best GFLOP/s found against the
 * number of trials for a small GEMM, evolution guided by the learned model against random
 * sampling (and against evolution guided by a random model), with the same trial budget, round
 * size (64, Ansor's) and seeds; and the share of wall time spent outside measurement. Programs
 * are measured single-threaded in a child JVM, one fresh measurer per run. Run with
 * {@code ./kiln mvn verify -pl autoschedule -am -Dtest=SearchEfficiencyBenchmark -Dsurefire.failIfNoSpecifiedTests=false}
 * ({@code -Dkiln.bench.trials=N}, {@code -Dkiln.bench.seeds=1,2}, {@code -Dkiln.bench.gemm=256}).
 * Results are printed and written to {@code autoschedule/target/costmodel-bench/search-efficiency.txt}.
 */
class SearchEfficiencyBenchmark {

    interface PolicyMaker {
        SearchPolicy make(SearchTask task, long seed);
    }

    @Test
    void gemm() throws IOException {
        int size = Integer.getInteger("kiln.bench.gemm", 256);
        int trials = Integer.getInteger("kiln.bench.trials", 256);
        long[] seeds = Arrays.stream(System.getProperty("kiln.bench.seeds", "1,2").split(",")).mapToLong(Long::parseLong).toArray();
        ComputeDAG dag = Workloads.matmul(size, size, size);
        CpuTarget target = Target.cpu().withCores(1);
        SearchTask task = AutoSchedule.task(dag, target);
        Map<String, PolicyMaker> policies = new LinkedHashMap<>();
        policies.put("evolution + learned model", EvolutionarySearchPolicy::cpu);
        policies.put("random sampling", RandomSearchPolicy::cpu);
        policies.put("evolution + random model", (t, s) -> new EvolutionarySearchPolicy(t,
                SketchGenerator.cpu().generate(t), new RandomCostModel(s), EvolutionOptions.defaults(), s));
        int[] checkpoints = {64, 128, 192, 256, 384, 512};
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
                "GEMM %d (%.1f MFLOP), %d trials, 64 per round, seeds %s, target %s%nload average before: %s%n", size,
                dag.flopCount() / 1e6, trials, Arrays.toString(seeds), target, CostModelBenchmark.load()));
        StringBuilder head = new StringBuilder("| policy | seed |");
        StringBuilder rule = new StringBuilder("|---|---|");
        for (int c : checkpoints) {
            if (c > trials) continue;
            head.append(" best @").append(c).append(" |");
            rule.append("---|");
        }
        out.append(head).append(" wall s | measuring s | outside measurement |\n").append(rule).append("---|---|---|\n");
        Map<String, List<double[]>> curves = new LinkedHashMap<>();
        for (long seed : seeds) {
            for (var p : policies.entrySet()) {
                SearchPolicy policy = p.getValue().make(task, seed);
                TuningLog log = TuningLog.inMemory();
                long t0 = System.nanoTime();
                SearchOutcome o;
                try (Measurer m = ProcessMeasurer.start(target, MeasuredPrograms.OPTIONS)) {
                    o = new SearchLoop(task, policy, m, log, new SearchLimits(trials, 64, Duration.ZERO, 0),
                            TuneProgress.none()).run();
                } finally {
                    if (policy instanceof AutoCloseable c) {
                        try {
                            c.close();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    }
                }
                double wall = (System.nanoTime() - t0) / 1e9;
                List<LogRecord> rs = log.records();
                double[] best = new double[rs.size()];
                double b = 0, measuring = 0;
                for (int i = 0; i < rs.size(); i++) {
                    LogRecord r = rs.get(i);
                    if (r.isValid()) b = Math.max(b, r.gflops(dag.flopCount()));
                    best[i] = b;
                    measuring += r.wallSeconds();
                }
                curves.computeIfAbsent(p.getKey(), k -> new ArrayList<>()).add(best);
                StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "| %s | %d |", p.getKey(), seed));
                for (int c : checkpoints) {
                    if (c <= trials) line.append(String.format(Locale.ROOT, " %.1f |", best[Math.min(c, best.length) - 1]));
                }
                line.append(String.format(Locale.ROOT, " %.0f | %.0f | %.0f%% |", wall, measuring, 100 * (wall - measuring) / wall));
                System.out.println(line + "   (" + o.trials() + " trials, stopped: " + o.stopReason() + ")");
                out.append(line).append('\n');
            }
        }
        out.append("\nMean over seeds of best GFLOP/s, and the ratio to random sampling at the same trial count:\n\n")
                .append(head).append("\n").append(rule).append("\n");
        double[] random = mean(curves.get("random sampling"));
        for (var e : curves.entrySet()) {
            double[] m = mean(e.getValue());
            StringBuilder line = new StringBuilder("| " + e.getKey() + " | mean |");
            for (int c : checkpoints) {
                if (c > trials) continue;
                int i = Math.min(c, m.length) - 1;
                line.append(String.format(Locale.ROOT, " %.1f (%.2fx) |", m[i], m[i] / random[Math.min(i, random.length - 1)]));
            }
            out.append(line).append('\n');
        }
        out.append("load average after: ").append(CostModelBenchmark.load()).append('\n');
        System.out.print(out);
        Files.createDirectories(CostModelBenchmark.DIR);
        Files.writeString(CostModelBenchmark.DIR.resolve("search-efficiency.txt"), out);
    }

    static double[] mean(List<double[]> curves) {
        int n = curves.stream().mapToInt(c -> c.length).min().orElse(0);
        double[] m = new double[n];
        for (double[] c : curves) for (int i = 0; i < n; i++) m[i] += c[i] / curves.size();
        return m;
    }
}
