package dev.kiln.bench.model;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.model.GbdtParams;
import dev.kiln.autoschedule.model.PretrainedModel;
import dev.kiln.autoschedule.model.PretrainingSet;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTask;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.bench.network.NetworkBench;
import dev.kiln.ir.KilnException;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./kiln pretrain}: trains a cost model on the programs Kiln measured in its tuning logs
 * ({@link PretrainingSet}, {@link PretrainedModel}), and checks it on tasks held out of its
 * training set: how well it ranks their measured programs (pairwise accuracy; a random model
 * scores 0.5) and how fast the program it ranks first is (against the best measured one).
 *
 * <p>A log does not hold the computations, only their workload keys, so the command rebuilds the
 * tasks the logs can hold: every task of the named networks (with and without the layout rewrite,
 * at each thread count) and the named operator workloads.
 */
@Command(
        name = "kiln pretrain",
        mixinStandardHelpOptions = true,
        description = "Pretrains a cost model on tuning logs and checks it on held-out networks.")
public final class PretrainBench implements Callable<Integer> {

    @Option(names = "--log", split = ",", required = true, description = "Tuning logs to learn from (comma-separated).")
    List<Path> logs;

    @Option(
            names = "--networks",
            split = ",",
            description = "Networks whose tasks the logs hold (default: ${DEFAULT-VALUE}).")
    List<String> networks = List.of("mobilenetv2", "bert", "resnet50", "resnet18-small");

    @Option(
            names = "--workloads",
            description = "Operator workloads the logs hold, as model-bench names them (gemm:N, c2d:I, ...).")
    String workloads = "";

    @Option(
            names = "--threads",
            split = ",",
            description = "Thread counts the logs were tuned at (default: ${DEFAULT-VALUE}).")
    List<Integer> threads = List.of(1, 2);

    @Option(
            names = "--hold-out",
            split = ",",
            description = "Networks left out of training and used to check the model.")
    List<String> holdOut = List.of();

    @Option(names = "--out", description = "Where to write the trained model (.json or .json.gz); none: only check.")
    Path out;

    public static void main(String[] args) {
        System.exit(new CommandLine(new PretrainBench()).execute(args));
    }

    @Override
    public Integer call() {
        Map<String, SearchTask> tasks = new LinkedHashMap<>();
        Map<String, String> source = new LinkedHashMap<>();
        for (int t : threads) {
            CpuTarget target = Target.cpu().withCores(t);
            for (String n : networks) {
                for (boolean rewrite : new boolean[] {true, false}) {
                    for (NetworkTask nt : Network.tasks(NetworkBench.graphOf(n, 1), target, rewrite)) {
                        tasks.putIfAbsent(nt.task().workloadKey() + "\n" + t, nt.task());
                        source.putIfAbsent(nt.task().workloadKey(), n);
                    }
                }
            }
            if (!workloads.isBlank()) {
                for (BenchWorkloads.Workload w : BenchWorkloads.list(workloads)) {
                    SearchTask st = AutoSchedule.task(w.dag(), target);
                    tasks.putIfAbsent(st.workloadKey() + "\n" + t, st);
                    source.putIfAbsent(st.workloadKey(), w.spec());
                }
            }
        }
        for (String h : holdOut) {
            if (!networks.contains(h))
                throw new KilnException("--hold-out: '" + h + "' is not one of --networks " + networks);
        }
        Set<String> held = Set.copyOf(holdOut);
        PretrainingSet train = new PretrainingSet(), test = new PretrainingSet();
        for (Path log : logs) {
            if (!Files.isRegularFile(log)) throw new KilnException("--log: " + log + " does not exist");
            for (int t : threads) {
                Map<String, SearchTask> byKey = new LinkedHashMap<>();
                tasks.forEach((k, v) -> {
                    if (k.endsWith("\n" + t)) byKey.put(v.workloadKey(), v);
                });
                train.addLogs(log, byKey, st -> !held.contains(source.get(st.workloadKey())));
                test.addLogs(log, byKey, st -> held.contains(source.get(st.workloadKey())));
            }
        }
        System.out.printf(
                Locale.ROOT,
                "training set: %d programs of %d tasks; held out: %d programs of %d tasks%n",
                train.size(),
                train.perTask().size(),
                test.size(),
                test.perTask().size());
        if (train.size() == 0)
            throw new KilnException("no log record matched a task of " + networks + " outside the held-out ones");
        long t0 = System.nanoTime();
        String what = "Kiln's tuning records of "
                + networks.stream().filter(n -> !held.contains(n)).collect(Collectors.joining(", "))
                + (workloads.isBlank() ? "" : " and " + workloads);
        PretrainedModel pm = PretrainedModel.train(train, GbdtParams.defaults(), what);
        System.out.printf(Locale.ROOT, "trained %s in %.1f s%n", pm, (System.nanoTime() - t0) / 1e9);
        if (test.size() > 0) {
            System.out.println(
                    "held-out task\tprograms\tpairwise accuracy (random 0.5)\tfirst pick / best measured\trandom "
                            + "pick / best" + "\tpicks to 95% of best\trandom order (expected)");
            double acc = 0, pick = 0, random = 0, picks = 0, randomPicks = 0;
            int n = 0;
            for (PretrainingSet.Ranking r : test.rank(pm)) {
                String task = r.task().substring(0, r.task().indexOf('\n'));
                System.out.printf(
                        Locale.ROOT,
                        "%s (%s)\t%d\t%.3f\t%.3f\t%.3f\t%d\t%.1f%n",
                        task,
                        source.get(task),
                        r.programs(),
                        r.pairwiseAccuracy(),
                        r.firstPick(),
                        r.randomPick(),
                        r.picksTo95(),
                        r.randomPicksTo95());
                if (Double.isFinite(r.pairwiseAccuracy()) && Double.isFinite(r.firstPick())) {
                    acc += r.pairwiseAccuracy();
                    pick += r.firstPick();
                    random += r.randomPick();
                    picks += r.picksTo95();
                    randomPicks += r.randomPicksTo95();
                    n++;
                }
            }
            if (n > 0)
                System.out.printf(
                        Locale.ROOT,
                        "mean over %d held-out tasks: pairwise accuracy %.3f (random 0.5), "
                                + "first pick %.3f of the best (random pick %.3f), %.1f picks to 95%% of the best "
                                + "(random order %.1f)%n",
                        n,
                        acc / n,
                        pick / n,
                        random / n,
                        picks / n,
                        randomPicks / n);
        }
        if (out != null) {
            pm.save(out);
            System.out.println("wrote " + out);
        }
        return 0;
    }
}
