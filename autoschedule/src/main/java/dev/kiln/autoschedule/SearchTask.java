package dev.kiln.autoschedule;

import dev.kiln.ir.KilnException;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.layout.LayoutRewrite;
import dev.kiln.schedule.layout.PackFolding;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One tuning problem: a computation, the {@link Target} it is tuned for, the target's hardware
 * parameters (by default derived from the target, {@link HardwareParams#of}; they may be given
 * apart, as Ansor's tests give 4 cores), the workload key that names the computation in logs (by
 * default the DAG's structural key), and the arguments whose layout the program may choose.
 * Tuning logs record and compare the target's stable string form ({@link #targetDescription()}).
 * The rules the search uses come from the target's kind
 * ({@link dev.kiln.autoschedule.search.TargetRules#of}).
 *
 * <p>{@code layoutFree} lists argument positions (in {@code dag.arguments()}) that hold constants,
 * such as a network's weights: every program of the task is measured with those arguments packed
 * in the order its loops read them ({@link LayoutRewrite}, Ansor's {@code REWRITE_FOR_PRE_TRANSFORMED}),
 * and the cost model sees the packed program, so the search picks tiles for the layout the kernel
 * will really read. A program built from such a task expects its weights packed the same way
 * ({@link #rewriteLayouts}). Those tasks are keyed apart from the plain ones (see
 * {@link #withLayoutFree}), since their measured times are of different programs.
 *
 * <p>{@code folds} are the {@code layout_pack} stages of layout-free weights that {@link #withLayoutFree} folded out of
 * the DAG ({@link PackFolding}): {@code dag} reads the packed constants in their place, and
 * {@link #rewriteLayouts}'s {@link LayoutRewrite.Result#transformArguments} packs the original weights once.
 */
public record SearchTask(
        ComputeDAG dag,
        Target target,
        HardwareParams hardware,
        String workloadKey,
        List<Integer> layoutFree,
        List<PackFolding.Fold> folds) {
    public SearchTask {
        folds = List.copyOf(folds);
        Objects.requireNonNull(dag, "dag");
        Objects.requireNonNull(hardware, "hardware");
        if (target == null) throw new KilnException("a search task needs a target");
        if (workloadKey == null || workloadKey.isBlank()) throw new KilnException("a search task needs a workload key");
        layoutFree = List.copyOf(layoutFree).stream().distinct().sorted().toList();
        int outputs = dag.outputs().size(), args = dag.arguments().size();
        for (int a : layoutFree) {
            if (a < 0 || a >= args - outputs) {
                throw new KilnException("search task " + workloadKey + ": layout-free argument " + a
                        + " is not an input of the DAG (" + (args - outputs) + " inputs: "
                        + dag.inputs().stream().map(Tensor::name).toList() + ")");
            }
            if (!dag.arguments().get(a).isPlaceholder()) {
                throw new KilnException("search task " + workloadKey + ": layout-free argument " + a + " '"
                        + dag.arguments().get(a).name() + "' is not a placeholder");
            }
        }
    }

    /** A task with no folded pack. */
    public SearchTask(
            ComputeDAG dag, Target target, HardwareParams hardware, String workloadKey, List<Integer> layoutFree) {
        this(dag, target, hardware, workloadKey, layoutFree, List.of());
    }

    /** A task whose arguments all keep their layout. */
    public SearchTask(ComputeDAG dag, Target target, HardwareParams hardware, String workloadKey) {
        this(dag, target, hardware, workloadKey, List.of());
    }

    /**
     * A task for {@code dag} on {@code target} with the target's hardware parameters, keyed by the DAG's workload key.
     */
    public static SearchTask of(ComputeDAG dag, Target target) {
        return of(dag, target, HardwareParams.of(target));
    }

    /** A task for {@code dag} on {@code target} with these hardware parameters, keyed by the DAG's workload key. */
    public static SearchTask of(ComputeDAG dag, Target target, HardwareParams hardware) {
        return new SearchTask(dag, target, hardware, dag.workloadKey());
    }

    /**
     * {@link #of(ComputeDAG, Target, HardwareParams)} for a target in its string form
     * ({@link Target#parse}; a string that is not one throws, naming it).
     */
    public static SearchTask of(ComputeDAG dag, String target, HardwareParams hardware) {
        return of(dag, Target.parse(target), hardware);
    }

    /** A task on this machine's CPU ({@link Target#cpu()}) with the given hardware parameters. */
    public static SearchTask cpu(ComputeDAG dag, HardwareParams hardware) {
        return of(dag, Host.CPU, hardware);
    }

    /** A CPU task for this machine ({@link Target#cpu()}, {@link HardwareParams#thisCpu()}). */
    public static SearchTask thisCpu(ComputeDAG dag) {
        return cpu(dag, HardwareParams.thisCpu());
    }

    /** The host CPU, detected once. */
    private static final class Host {
        static final CpuTarget CPU = Target.cpu();
    }

    /**
     * The target's stable string form ({@link Target#toString()}), which tuning logs record and
     * compare: {@code cpu -mtriple=x86_64-unknown-linux-gnu -mcpu=znver5 ... -cache-line=64}.
     */
    public String targetDescription() {
        return target.toString();
    }

    /**
     * This task with the arguments at {@code positions} layout-free (constant weights whose layout
     * the program chooses). Its workload key gains {@code " layout_free=[...]"}, so its log records
     * never mix with those of the same DAG measured on its original layouts. CPU targets only: a
     * GPU task throws (Kiln does not pack weights for GPU kernels). Empty positions return this task.
     *
     * <p>A {@code layout_pack} stage whose only input is one of those weights ({@code LowPrecision.packDenseWeight}
     * and the like) is folded ({@link PackFolding}): the returned task's DAG reads a packed constant of the pack's
     * name and shape at the weight's position, so its programs no longer pack the weight on every call, and the
     * key gains {@code " packs_folded=[...]"}. {@link #rewriteLayouts}{@code (s).transformArguments} packs the
     * weight once at build time.
     */
    public SearchTask withLayoutFree(List<Integer> positions) {
        if (positions.isEmpty()) return this;
        if (!(target instanceof CpuTarget)) {
            throw new KilnException("search task " + workloadKey
                    + ": the layout rewrite of constant arguments is for CPU targets, not '" + target + "'");
        }
        List<Integer> p = positions.stream().distinct().sorted().toList();
        SearchTask plain = new SearchTask(dag, target, hardware, workloadKey + " layout_free=" + p, p, folds);
        PackFolding.Folded f = PackFolding.fold(dag, plain.layoutFreeTensors(dag));
        if (!f.folded()) return plain;
        List<PackFolding.Fold> all = new java.util.ArrayList<>(folds);
        all.addAll(f.folds());
        return new SearchTask(
                f.dag(), target, hardware, plain.workloadKey() + " packs_folded=" + f.positions(), p, all);
    }

    /**
     * The task's structural key ({@link StructureKey#of}): equal for tasks whose programs replay on each other
     * with only their tile sizes refitted (the same fused computation of other shapes, same target and layout).
     */
    public String structureKey() {
        return StructureKey.of(this);
    }

    /** The placeholders at the layout-free positions of {@code d} (this task's DAG or one with the same workload). */
    public Set<Tensor> layoutFreeTensors(ComputeDAG d) {
        if (layoutFree.isEmpty()) return Set.of();
        if (d.arguments().size() != dag.arguments().size()) {
            throw new KilnException("search task " + workloadKey + ": a DAG with "
                    + d.arguments().size() + " arguments, not "
                    + dag.arguments().size());
        }
        Set<Tensor> s = Collections.newSetFromMap(new IdentityHashMap<>());
        for (int a : layoutFree) s.add(d.arguments().get(a));
        return s;
    }

    /**
     * The program this task measures for {@code s}: {@code s} itself, or, with layout-free
     * arguments, {@code s} rewritten to read them packed for its loops (weights that cannot be
     * packed keep their layout, see {@link LayoutRewrite.Result#skipped()}).
     */
    public LayoutRewrite.Result rewriteLayouts(Schedule s) {
        if (layoutFree.isEmpty()) return new LayoutRewrite.Result(s, List.of(), List.of());
        return LayoutRewrite.rewrite(s, layoutFreeTensors(s.dag())).withFolds(folds);
    }

    /**
     * The loop state whose program this task measures, for a candidate's bound-inferred state
     * ({@link Candidate#state()}; see {@link #rewriteLayouts}).
     */
    public LoopState measuredState(LoopState inferred) {
        if (layoutFree.isEmpty()) return inferred;
        return LayoutRewrite.rewriteInferred(inferred, layoutFreeTensors(inferred.dag()))
                .state();
    }
}
