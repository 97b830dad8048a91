package dev.kiln.schedule.layout;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import dev.kiln.te.PlaceholderOp;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Folds the packing of constant weights out of a computation: a {@code layout_pack} stage (the
 * {@code dev.kiln.nn.LowPrecision.pack*} operators) whose only input is a layout-free placeholder (a
 * constant weight) read by nothing else is replaced by a placeholder of the packed shape, with the
 * pack stage's name, at the weight's argument position. The program then reads the packed constant
 * and no longer contains the pack loop; the weight is packed once, at build time, by
 * {@link Fold#apply} (the pack stage itself, run by the interpreter on the weight).
 *
 * <p>{@link LayoutRewrite} cannot do this on a tuned schedule, since its steps name stages by index
 * and removing the pack stage would renumber them; the fold is applied to the DAG before tuning
 * instead (a layout-free search task, {@code SearchTask.withLayoutFree}), so the search never
 * spends trials on scheduling the pack and its measured programs are the ones that will run.
 */
public final class PackFolding {
    /** The tag of the stages that may be folded. */
    public static final String PACK_TAG = "layout_pack";

    private PackFolding() {}

    /**
     * One folded pack.
     *
     * @param argument its position in both DAGs' {@code arguments()}: the weight's in the original, the packed
     *                 constant's in the folded one
     * @param original the weight, a placeholder of the original DAG
     * @param folded   the placeholder of the folded DAG (the pack stage's name, dtype and shape)
     * @param pack     the pack stage of the original DAG
     */
    public record Fold(int argument, Tensor original, Tensor folded, ComputeOp pack) {
        /** The weight packed by the pack stage (a new array; {@code weight} is not changed). */
        public NDArray apply(NDArray weight) {
            if (weight.dtype() != original.dtype()
                    || !Arrays.equals(weight.shape(), original.shape().toArray())) {
                throw new KilnException("pack folding of '" + original.name() + "': the array is " + weight.dtype()
                        + Arrays.toString(weight.shape()) + ", the weight " + original.dtype()
                        + Arrays.toString(original.shape().toArray()));
            }
            NDArray out = NDArray.allocate(folded.dtype(), folded.shape().toArray());
            ComputeDAG packOnly = ComputeDAG.of(pack.output(0));
            Interpreter.run(Lowering.lower("fold_" + pack.name(), Schedule.empty(packOnly)), weight, out);
            return out;
        }

        @Override
        public String toString() {
            return original.name() + Arrays.toString(original.shape().toArray()) + " packed once by '" + pack.name()
                    + "' to " + Arrays.toString(folded.shape().toArray());
        }
    }

    /**
     * The outcome.
     *
     * @param dag   the folded DAG (the given one when nothing was folded); same number and order of arguments
     * @param folds the folded packs, in argument order
     */
    public record Folded(ComputeDAG dag, List<Fold> folds) {
        public Folded {
            folds = List.copyOf(folds);
        }

        /** Whether any pack was folded. */
        public boolean folded() {
            return !folds.isEmpty();
        }

        /** The argument positions of the folded DAG that hold a packed constant. */
        public List<Integer> positions() {
            return folds.stream().map(Fold::argument).toList();
        }
    }

    /**
     * Folds every {@code layout_pack} stage of {@code dag} whose only input is one of the {@code constants}
     * (placeholders of the DAG) and that is the only reader of that constant, is not an output and has no
     * reduction. The others are left as they are.
     */
    public static Folded fold(ComputeDAG dag, Set<Tensor> constants) {
        List<Tensor> args = dag.arguments();
        for (Tensor t : constants) {
            if (!(t.op() instanceof PlaceholderOp) || args.stream().noneMatch(a -> a == t)) {
                throw new KilnException("pack folding: tensor '" + t.name()
                        + "' is not a placeholder of the DAG, whose inputs are "
                        + dag.inputs().stream().map(Tensor::name).toList());
            }
        }
        Map<ComputeOp, Tensor> packs = new IdentityHashMap<>();
        Map<ComputeOp, Tensor> weights = new IdentityHashMap<>();
        for (Tensor p : args) {
            if (!constants.contains(p)) continue;
            List<ComputeOp> readers = dag.ops().stream()
                    .filter(o -> o instanceof ComputeOp c && c.inputTensors().contains(p))
                    .map(o -> (ComputeOp) o)
                    .toList();
            if (readers.size() != 1) continue;
            ComputeOp c = readers.get(0);
            boolean isOutput = dag.outputs().stream().anyMatch(o -> o.op() == c);
            if (!PACK_TAG.equals(c.tag())
                    || c.outputs().size() != 1
                    || !c.reduceAxes().isEmpty()
                    || isOutput
                    || c.inputTensors().size() != 1) continue;
            Tensor out = c.output(0);
            packs.put(c, Te.placeholder(c.name(), out.dtype(), out.shape().toArray()));
            weights.put(c, p);
        }
        if (packs.isEmpty()) return new Folded(dag, List.of());

        ComputeDAG folded = rebuild(dag, packs);
        List<Tensor> newArgs = folded.arguments();
        if (newArgs.size() != args.size()) {
            throw new KilnException(
                    "pack folding: the folded DAG has " + newArgs.size() + " arguments, not " + args.size());
        }
        List<Fold> folds = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            for (Map.Entry<ComputeOp, Tensor> e : weights.entrySet()) {
                if (e.getValue() != args.get(i)) continue;
                Tensor ph = packs.get(e.getKey());
                if (newArgs.get(i) != ph) {
                    throw new KilnException(
                            "pack folding: the packed constant '" + ph.name() + "' is not at the" + " position " + i
                                    + " of the weight '" + args.get(i).name() + "'");
                }
                folds.add(new Fold(i, args.get(i), ph, e.getKey()));
            }
        }
        return new Folded(folded, folds);
    }

    /** The DAG with each folded pack stage replaced by its placeholder and its readers rebuilt on it. */
    private static ComputeDAG rebuild(ComputeDAG dag, Map<ComputeOp, Tensor> packs) {
        Map<Tensor, Tensor> repl = new IdentityHashMap<>();
        for (Map.Entry<ComputeOp, Tensor> e : packs.entrySet())
            repl.put(e.getKey().output(0), e.getValue());
        for (Operation op : dag.ops()) {
            if (!(op instanceof ComputeOp c) || packs.containsKey(c)) continue;
            if (c.inputTensors().stream().noneMatch(repl::containsKey)) continue;
            ComputeOp rebuilt = c.readingReplaced(repl);
            for (int v = 0; v < c.outputs().size(); v++) repl.put(c.output(v), rebuilt.output(v));
        }
        return new ComputeDAG(
                dag.outputs().stream().map(t -> repl.getOrDefault(t, t)).toList());
    }
}
