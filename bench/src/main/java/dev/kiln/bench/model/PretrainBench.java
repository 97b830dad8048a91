package dev.kiln.bench.model;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.model.GbdtParams;
import dev.kiln.autoschedule.model.PretrainedModel;
import dev.kiln.autoschedule.model.PretrainingSet;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTask;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.bench.network.BenchNetworks;
import dev.kiln.bench.network.PretrainedModels;
import dev.kiln.bench.suite.SuiteDags;
import dev.kiln.bench.suite.SuiteWorkload;
import dev.kiln.bench.suite.SuiteWorkloads;
import dev.kiln.ir.KilnException;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
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
 * at each thread count), the named operator workloads, and with {@code --suite} every workload of
 * the operator suite as {@code ./kiln suite} tunes it (with and without FMA contraction and
 * layout-free weights). A held-out name is a network, a suite operator ({@code C2D}) or one suite
 * row by its key ({@code c2d-1-56-56-64-64-1-1-0}).
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
            description = "Networks whose tasks the logs hold, or 'none' (default: ${DEFAULT-VALUE}).")
    List<String> networks = List.of("mobilenetv2", "bert", "resnet50", "resnet18-small");

    @Option(
            names = "--workloads",
            description = "Operator workloads the logs hold, as model-bench names them (gemm:N, c2d:I, ...).")
    String workloads = "";

    @Option(
            names = "--suite",
            description = "Also the operator suite's tasks: 'builtin' (ansor-ops.tsv) or a workload list as "
                    + "./kiln suite --workloads reads it.")
    String suite;

    @Option(
            names = "--threads",
            split = ",",
            description = "Thread counts the logs were tuned at (default: ${DEFAULT-VALUE}).")
    List<Integer> threads = List.of(1, 2);

    @Option(
            names = "--hold-out",
            split = ",",
            description = "Networks, suite operators (C2D) or suite rows (c2d-1-56-56-64-64-1-1-0) left out of "
                    + "training and used to check the model.")
    List<String> holdOut = List.of();

    @Option(
            names = "--base",
            description = "Continue boosting from this model: 'bundled' (the shipped one) or a file written by "
                    + "./kiln pretrain (default: none, trees from scratch).")
    String base;

    @Option(names = "--out", description = "Where to write the trained model (.json or .json.gz); none: only check.")
    Path out;

    public static void main(String[] args) {
        System.exit(new CommandLine(new PretrainBench()).execute(args));
    }

    @Override
    public Integer call() {
        if (networks.equals(List.of("none"))) networks = List.of();
        Map<String, SearchTask> tasks = new LinkedHashMap<>();
        // a task's names: its network, or its suite operator and row, or its workload spec
        Map<String, List<String>> source = new LinkedHashMap<>();
        List<SuiteWorkload> suiteRows = suite == null
                ? List.of()
                : suite.equals("builtin") ? SuiteWorkloads.builtIn() : SuiteWorkloads.read(Path.of(suite));
        for (int t : threads) {
            CpuTarget target = Target.cpu().withCores(t);
            for (String n : networks) {
                for (boolean rewrite : new boolean[] {true, false}) {
                    for (NetworkTask nt : Network.tasks(BenchNetworks.graphOf(n, 1), target, rewrite)) {
                        tasks.putIfAbsent(
                                nt.task().workloadKey() + "\n" + nt.task().targetDescription(), nt.task());
                        source.putIfAbsent(nt.task().workloadKey(), List.of(n));
                    }
                }
            }
            if (!workloads.isBlank()) {
                for (BenchWorkloads.Workload w : BenchWorkloads.list(workloads)) {
                    SearchTask st = AutoSchedule.task(w.dag(), target);
                    tasks.putIfAbsent(st.workloadKey() + "\n" + st.targetDescription(), st);
                    source.putIfAbsent(st.workloadKey(), List.of(w.spec()));
                }
            }
            for (SuiteWorkload w : suiteRows) {
                var dag = SuiteDags.of(w);
                for (boolean fma : new boolean[] {true, false}) {
                    CpuTarget suiteTarget = target.withFastMath(fma);
                    for (List<String> constants : List.of(SuiteDags.layoutFree(w), List.<String>of())) {
                        SearchTask st = AutoSchedule.task(dag, suiteTarget, constants);
                        tasks.putIfAbsent(st.workloadKey() + "\n" + st.targetDescription(), st);
                        source.putIfAbsent(st.workloadKey(), List.of(w.op(), w.key()));
                    }
                }
            }
        }
        Set<String> names = new java.util.TreeSet<>();
        source.values().forEach(names::addAll);
        for (String h : holdOut) {
            if (!names.contains(h))
                throw new KilnException(
                        "--hold-out: '" + h + "' names no network, suite operator or suite row of this run " + names);
        }
        Set<String> held = Set.copyOf(holdOut);
        java.util.function.Predicate<SearchTask> heldOut =
                st -> source.getOrDefault(st.workloadKey(), List.of()).stream().anyMatch(held::contains);
        PretrainingSet train = new PretrainingSet(), test = new PretrainingSet();
        for (Path log : logs) {
            if (!Files.isRegularFile(log)) throw new KilnException("--log: " + log + " does not exist");
            // one pass per target (thread count, FMA contraction): a record is read for the task of its key and target
            Map<String, Map<String, SearchTask>> byTarget = new LinkedHashMap<>();
            for (SearchTask st : tasks.values())
                byTarget.computeIfAbsent(st.targetDescription(), k -> new LinkedHashMap<>())
                        .put(st.workloadKey(), st);
            for (Map<String, SearchTask> byKey : byTarget.values()) {
                train.addLogs(log, byKey, heldOut.negate());
                test.addLogs(log, byKey, heldOut);
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
            throw new KilnException("no log record matched a task of " + networks
                    + (suiteRows.isEmpty() ? "" : " or the suite") + " outside the held-out ones");
        long t0 = System.nanoTime();
        List<String> from =
                new ArrayList<>(networks.stream().filter(n -> !held.contains(n)).toList());
        if (!workloads.isBlank()) from.add(workloads);
        if (!suiteRows.isEmpty()) from.add("the operator suite (" + suite + ")");
        String what = "Kiln's tuning records of " + String.join(", ", from)
                + (held.isEmpty() ? "" : "; held out: " + String.join(", ", holdOut));
        PretrainedModel baseModel = base == null ? null : PretrainedModels.named(base);
        if (baseModel != null) {
            what = baseModel.description() + "; then, boosted on: " + what;
            long seen = test.perTask().keySet().stream()
                    .map(k -> k.substring(0, k.indexOf('\n')))
                    .filter(baseModel.tasks()::contains)
                    .count();
            if (seen > 0)
                System.out.printf(Locale.ROOT, "note: the base model was trained on %d held-out tasks%n", seen);
        }
        PretrainedModel pm = PretrainedModel.train(train, GbdtParams.defaults(), what, baseModel);
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
                        String.join(" ", source.get(task)),
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
