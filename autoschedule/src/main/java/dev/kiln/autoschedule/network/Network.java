package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.annotate.CheckJvmTiles;
import dev.kiln.autoschedule.scheduler.SchedulerResult;
import dev.kiln.autoschedule.scheduler.TaskResult;
import dev.kiln.autoschedule.scheduler.TaskScheduler;
import dev.kiln.autoschedule.scheduler.TuningTask;
import dev.kiln.autoschedule.search.BestProgram;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.graph.Graph;
import dev.kiln.graph.fuse.FuseOps;
import dev.kiln.graph.fuse.Partition;
import dev.kiln.graph.pass.GraphPasses;
import dev.kiln.graph.pass.WinogradConvs;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The front door for whole networks: graph passes, fusion, task extraction, tuning with the task
 * scheduler, and compilation into a {@link CompiledNetwork}.
 *
 * <pre>{@code
 * Graph net = Models.resnet50(1, 224, seed);
 * try (CompiledNetwork cn = Network.tune(net, Target.cpu(),
 * NetworkTuneOptions.builder().trials(2000).logFile(log).build())) {     NDArray y = cn.run(x);
 * }
 * CompiledNetwork later = Network.build(net, Target.cpu(), log);   // the best logged programs, no search
 * }</pre>
 */
public final class Network {
    private Network() {}

    /** The graph after the passes, cut into fused groups (no Winograd convolutions: see the target's overload). */
    public static Partition partition(Graph g) {
        return FuseOps.apply(GraphPasses.optimize(g));
    }

    /**
     * The graph after the passes, cut into fused groups, as {@code target} tunes and runs it: for the LLVM CPU
     * target the 3x3 stride-1 float convolutions with a constant weight become Winograd convolutions ({@link
     * WinogradConvs}; {@code -Dkiln.winograd=false} keeps them direct, e.g. for logs tuned before 2026-12-07).
     */
    public static Partition partition(Graph g, Target target) {
        Graph opt = GraphPasses.optimize(g);
        if (winograd(target)) opt = WinogradConvs.apply(opt);
        return FuseOps.apply(opt);
    }

    /** Whether {@link #partition(Graph, Target)} makes Winograd convolutions for {@code target}. */
    public static boolean winograd(Target target) {
        return WinogradConvs.enabled() && target instanceof CpuTarget && !CheckJvmTiles.isJvm(target);
    }

    /**
     * The tuning tasks of {@code g} on {@code target}, with the layout rewrite of constant weights on a CPU (the
     * default).
     */
    public static List<NetworkTask> tasks(Graph g, Target target) {
        return tasks(g, target, true);
    }

    /**
     * The tuning tasks of {@code g} on {@code target}, with or without the layout rewrite
     * ({@link TaskExtraction#extract}).
     */
    public static List<NetworkTask> tasks(Graph g, Target target, boolean layoutRewrite) {
        return TaskExtraction.extract(partition(g, target), target, layoutRewrite);
    }

    /**
     * Tunes every task of {@code g} with the task scheduler (Ansor's gradient strategy by default),
     * then compiles the network with each task's best program. The options' log keeps every
     * measurement: a second call resumes, and {@link #build} compiles from it without searching.
     * Throws naming each task that ended without a valid program (with its first errors).
     */
    public static CompiledNetwork tune(Graph g, Target target, NetworkTuneOptions options) {
        Partition p = partition(g, target);
        List<NetworkTask> tasks = TaskExtraction.extract(p, target, options.layoutRewrite());
        List<TuningTask> tt = new ArrayList<>();
        for (NetworkTask t : tasks) tt.add(new TuningTask(t.task(), t.weight(), t.tag(), t.description()));
        SchedulerResult r = new TaskScheduler(tt, options.scheduler()).tune();
        Map<NetworkTask, Schedule> schedules = new LinkedHashMap<>();
        double[] tuned = new double[tasks.size()];
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < tasks.size(); i++) {
            TaskResult tr = r.tasks().get(i);
            NetworkTask t = tasks.get(i);
            if (tr.best().isPresent()) {
                schedules.put(t, tr.best().get().schedule());
                tuned[t.id()] = tr.best().get().seconds();
            } else {
                missing.add("task " + t.id() + " (" + t.description() + "): " + tr.status() + ", " + tr.trials()
                        + " trial(s), errors " + tr.errorsByKind() + " " + tr.firstErrors());
            }
        }
        if (!missing.isEmpty()) {
            throw new KilnException("tuning network '" + g.name() + "' left " + missing.size() + " of " + tasks.size()
                    + " task(s) without a valid program\n  " + String.join("\n  ", missing));
        }
        CompiledNetwork cn =
                NetworkCompiler.compile(p, tasks, schedules, target, new ArrayList<>(), options.layoutRewrite(), tuned);
        cn.setTuning(r);
        return cn;
    }

    /**
     * Compiles {@code g} with the best program of every task in {@code log}, without searching,
     * for a log tuned with the default options (the layout rewrite on). Throws naming every task
     * the log has no valid program for.
     */
    public static CompiledNetwork build(Graph g, Target target, Path log) {
        return build(g, target, log, true);
    }

    /**
     * {@link #build(Graph, Target, Path)} for a log tuned with {@code layoutRewrite} as given
     * ({@link NetworkTuneOptions#layoutRewrite}): the tasks, their log keys and the packing of
     * their weights follow it.
     */
    public static CompiledNetwork build(Graph g, Target target, Path log, boolean layoutRewrite) {
        Partition p = partition(g, target);
        List<NetworkTask> tasks = TaskExtraction.extract(p, target, layoutRewrite);
        Map<NetworkTask, BestProgram> best = bestPrograms(g, tasks, log);
        return NetworkCompiler.compile(
                p, tasks, schedules(best), target, new ArrayList<>(), layoutRewrite, tunedSeconds(tasks, best));
    }

    /**
     * The programs of a log tuned with the layout rewrite, compiled with every weight in its
     * original layout: what the packing is worth (the programs were chosen for packed weights, so
     * this is a comparison, not a way to run a network faster).
     */
    public static CompiledNetwork buildWithoutPacking(Graph g, Target target, Path log) {
        Partition p = partition(g, target);
        List<NetworkTask> tasks = TaskExtraction.extract(p, target, true);
        List<String> notes = new ArrayList<>();
        notes.add("weights in their original layout although the programs were tuned with them packed");
        Map<NetworkTask, BestProgram> best = bestPrograms(g, tasks, log);
        return NetworkCompiler.compile(p, tasks, schedules(best), target, notes, false, tunedSeconds(tasks, best));
    }

    private static Map<NetworkTask, Schedule> schedules(Map<NetworkTask, BestProgram> best) {
        Map<NetworkTask, Schedule> out = new LinkedHashMap<>();
        best.forEach((t, b) -> out.put(t, b.schedule()));
        return out;
    }

    private static double[] tunedSeconds(List<NetworkTask> tasks, Map<NetworkTask, BestProgram> best) {
        double[] out = new double[tasks.size()];
        for (NetworkTask t : tasks) out[t.id()] = best.get(t).seconds();
        return out;
    }

    private static Map<NetworkTask, BestProgram> bestPrograms(Graph g, List<NetworkTask> tasks, Path log) {
        if (!Files.isRegularFile(log)) throw new KilnException("tuning log " + log + " does not exist");
        Map<NetworkTask, BestProgram> schedules = new LinkedHashMap<>();
        List<String> missing = new ArrayList<>();
        for (NetworkTask t : tasks) {
            try {
                schedules.put(t, AutoSchedule.bestProgram(t.task(), log));
            } catch (KilnException e) {
                missing.add("task " + t.id() + " (" + t.description() + "): " + e.getMessage());
            }
        }
        if (!missing.isEmpty()) {
            throw new KilnException(
                    "cannot build network '" + g.name() + "' from " + log + ": " + missing.size() + " of "
                            + tasks.size()
                            + " task(s) have no valid program in the log; tune it first (a log tuned with the layout "
                            + "rewrite off needs build(graph, target, log, false))\n  " + String.join("\n  ", missing));
        }
        return schedules;
    }

    /**
     * Compiles {@code g} with the default lowering of every task (no tuning): correct, slow; for
     * checks and as the untuned baseline. The result's notes say so.
     */
    public static CompiledNetwork buildUntuned(Graph g, Target target) {
        Partition p = partition(g, target);
        List<NetworkTask> tasks = TaskExtraction.extract(p, target);
        Map<NetworkTask, Schedule> schedules = new LinkedHashMap<>();
        for (NetworkTask t : tasks) schedules.put(t, Schedule.empty(t.task().dag()));
        List<String> notes = new ArrayList<>();
        notes.add("untuned: every task uses its default lowering");
        return NetworkCompiler.compile(p, tasks, schedules, target, notes, false, null);
    }
}
