package dev.kiln.bench.measure;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.CostStatistic;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.measure.ProcessMeasurer;
import dev.kiln.autoschedule.search.RandomSearchPolicy;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.bench.model.BenchWorkloads;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * How far repeated measurements of the same programs agree (issue 13): {@code ./kiln measure-bench}.
 *
 * <p>For each workload it samples the same random programs (seeded), then measures all of them
 * {@code --runs} times under each policy ({@link MeasurePolicy}), each run in a fresh child JVM
 * ({@link ProcessMeasurer}, as a tuner measures), the policies taking turns within every run so
 * that a slow spell of the machine does not fall on one policy. For every policy and cost
 * statistic ({@link CostStatistic}, all read from the same raw repeats) it reports the pairwise
 * order agreement between runs, Spearman's rank correlation, the overlap of the 5 fastest, and
 * the per-program relative spread ({@link Agreement}); and, as the cost-model benchmark once
 * measured it, the agreement of the first and the last repeat within one measurement. Programs
 * that fail in any run are left out. The table is printed and written as a TSV.
 */
@Command(
        name = "kiln measure-bench",
        mixinStandardHelpOptions = true,
        description =
                "Measures the same random programs several times under each timing policy and reports how well the "
                        + "runs agree.")
public final class MeasureBench implements Callable<Integer> {
    @Option(
            names = "--workloads",
            description = "Comma-separated workloads (gemm:N, c2d:I, dep:I, softmax:NxM; default: ${DEFAULT-VALUE}).")
    String workloads = "gemm:512,c2d:1,softmax:128x256";

    @Option(names = "--programs", description = "Random programs per workload (default: ${DEFAULT-VALUE}).")
    int programs = 40;

    @Option(
            names = "--runs",
            description = "Measurements of every program under each policy (at least 2; default: ${DEFAULT-VALUE}).")
    int runs = 2;

    @Option(
            names = "--policies",
            description = "Comma-separated policies: legacy, warmup, default, flush, flush-short, flush-none, long "
                    + "(default: ${DEFAULT-VALUE}).")
    String policies = "legacy,warmup,default";

    @Option(names = "--threads", description = "Cores the programs may use (default: ${DEFAULT-VALUE}).")
    int threads = 1;

    @Option(names = "--timeout", description = "Seconds per program measurement (default: ${DEFAULT-VALUE}).")
    double timeout = 20;

    @Option(names = "--seed", description = "Seed of the sampled programs (default: ${DEFAULT-VALUE}).")
    long seed = 13;

    @Option(names = "--dir", description = "Where the TSV goes (default: ${DEFAULT-VALUE}).")
    Path dir = Path.of("kiln-bench", "measure");

    static final String HEADER =
            "workload\tpolicy\tstatistic\tprograms\truns\tpairwise\tspearman\ttop5\tspread_p50\tspread_p90"
                    + "\tfirst_last_pairwise\ts_per_program\tload_before\tload_after";

    public static void main(String[] args) {
        System.exit(new CommandLine(new MeasureBench()).execute(args));
    }

    @Override
    public Integer call() throws IOException {
        if (runs < 2)
            throw new CommandLine.ParameterException(new CommandLine(this), "--runs must be at least 2, got " + runs);
        if (programs < 2)
            throw new CommandLine.ParameterException(
                    new CommandLine(this), "--programs must be at least 2, got " + programs);
        if (threads < 1)
            throw new CommandLine.ParameterException(
                    new CommandLine(this), "--threads must be at least 1, got " + threads);
        List<MeasurePolicy> ps;
        try {
            ps = MeasurePolicy.list(policies, timeout);
        } catch (RuntimeException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--policies: " + e.getMessage());
        }
        Files.createDirectories(dir);
        Path tsv = dir.resolve("agreement.tsv");
        Files.writeString(tsv, HEADER + "\n");
        CpuTarget target = Target.cpu().withCores(threads);
        System.out.println("target: " + target);
        ps.forEach(p -> System.out.println("policy " + p.describe()));
        for (BenchWorkloads.Workload w : BenchWorkloads.list(workloads)) {
            String loadBefore = load();
            SearchTask task = AutoSchedule.task(w.dag(), target);
            List<Schedule> sample = RandomSearchPolicy.cpu(task, seed).nextBatch(programs, Set.of()).stream()
                    .map(Candidate::schedule)
                    .toList();
            System.out.printf(
                    Locale.ROOT,
                    "%n%s: %d programs, %d runs per policy, load %s%n",
                    w.name(),
                    sample.size(),
                    runs,
                    loadBefore);
            // results[policy][run][program]
            MeasureResult[][][] results = new MeasureResult[ps.size()][runs][];
            double[] seconds = new double[ps.size()];
            for (int r = 0; r < runs; r++) {
                for (int p = 0; p < ps.size(); p++) {
                    long t0 = System.nanoTime();
                    try (Measurer m = ProcessMeasurer.start(target, ps.get(p).options())) {
                        results[p][r] = m.measure(task, sample).toArray(MeasureResult[]::new);
                    }
                    seconds[p] += (System.nanoTime() - t0) / 1e9;
                    System.out.printf(
                            Locale.ROOT,
                            "  run %d, %-8s %.1f s%n",
                            r + 1,
                            ps.get(p).name(),
                            (System.nanoTime() - t0) / 1e9);
                }
            }
            String loadAfter = load();
            List<Integer> valid = validEverywhere(results, sample.size());
            System.out.printf(
                    Locale.ROOT,
                    "  %d of %d programs valid in every run; load %s%n",
                    valid.size(),
                    sample.size(),
                    loadAfter);
            System.out.printf(
                    Locale.ROOT,
                    "  %-8s %-13s %9s %9s %6s %11s %11s %11s %8s%n",
                    "policy",
                    "statistic",
                    "pairwise",
                    "spearman",
                    "top5",
                    "spread p50",
                    "spread p90",
                    "first/last",
                    "s/prog");
            for (int p = 0; p < ps.size(); p++) {
                double firstLast = firstLast(results[p], valid);
                double perProgram = seconds[p] / runs / sample.size();
                for (CostStatistic s : CostStatistic.values()) {
                    if (valid.size() < 2) continue;
                    Agreement a = Agreement.of(costs(results[p], valid, s));
                    System.out.printf(
                            Locale.ROOT,
                            "  %-8s %-13s %9.4f %9.4f %6.2f %10.1f%% %10.1f%% %11.4f %8.2f%n",
                            ps.get(p).name(),
                            s.name().toLowerCase(Locale.ROOT),
                            a.pairwise(),
                            a.spearman(),
                            a.top5(),
                            100 * a.spreadP50(),
                            100 * a.spreadP90(),
                            firstLast,
                            perProgram);
                    Files.writeString(
                            tsv,
                            String.join(
                                            "\t",
                                            w.spec(),
                                            ps.get(p).name(),
                                            s.name().toLowerCase(Locale.ROOT),
                                            String.valueOf(valid.size()),
                                            String.valueOf(runs),
                                            f(a.pairwise()),
                                            f(a.spearman()),
                                            f(a.top5()),
                                            f(a.spreadP50()),
                                            f(a.spreadP90()),
                                            f(firstLast),
                                            f(perProgram),
                                            loadBefore,
                                            loadAfter)
                                    + "\n",
                            java.nio.file.StandardOpenOption.APPEND);
                }
            }
        }
        System.out.println("\nwritten: " + tsv);
        return 0;
    }

    /** Indices of the programs every run of every policy measured without error. */
    static List<Integer> validEverywhere(MeasureResult[][][] results, int n) {
        List<Integer> out = new ArrayList<>();
        outer:
        for (int i = 0; i < n; i++) {
            for (MeasureResult[][] policy : results) {
                for (MeasureResult[] run : policy) if (!run[i].ok()) continue outer;
            }
            out.add(i);
        }
        return out;
    }

    /** {@code costs[run][program]} of the valid programs under statistic {@code s}. */
    static double[][] costs(MeasureResult[][] runs, List<Integer> valid, CostStatistic s) {
        double[][] c = new double[runs.length][valid.size()];
        for (int r = 0; r < runs.length; r++) {
            for (int i = 0; i < valid.size(); i++) c[r][i] = runs[r][valid.get(i)].cost(s);
        }
        return c;
    }

    /** The pairwise agreement of the first and the last repeat within the first run (the old noise measure). */
    static double firstLast(MeasureResult[][] runs, List<Integer> valid) {
        double[] first = new double[valid.size()], last = new double[valid.size()];
        for (int i = 0; i < valid.size(); i++) {
            double[] c = runs[0][valid.get(i)].costsSeconds();
            first[i] = -c[0];
            last[i] = -c[c.length - 1];
        }
        return valid.size() < 2 ? Double.NaN : dev.kiln.bench.model.Metrics.pairwiseAccuracy(first, last);
    }

    private static String f(double v) {
        return String.format(Locale.ROOT, "%.4f", v);
    }

    static String load() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }
}
