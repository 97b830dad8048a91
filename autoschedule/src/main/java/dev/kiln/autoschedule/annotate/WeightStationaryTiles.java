package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.TensorRead;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Weight-stationary tiles for stages that read large constant weights (Kiln's addition to Ansor's tile-size
 * sampling, CPU only). A multi-level-tiled stage runs its level-0 tiles in parallel: with the output's rows split
 * there (Ansor's uniform draw usually splits every spatial axis), each thread's rows need all of the weights, so a
 * conv over a 7x7 map with 9.4 MB of weights streams them from memory once per row block and on every core. Drawn
 * with its level-0 factor 1 on each axis the weights do not depend on (the rows and columns of a conv, the rows of a
 * dense layer), the level-0 tiles split the output channels alone: each thread reads only its own blocks of
 * weights, once, and reuses a block over all the rows inside it from its own cache (oneDNN's and MLAS's
 * partitioning of such layers). On ResNet-50's layer-4 conv such a program ran 0.62 ms in the tuner's cold state,
 * against 0.91-1.0 ms for the row-split program the search had kept (docs/PERFORMANCE.md, thirty-third session).
 *
 * <p>A stage qualifies when it reads a layout-free input ({@link SearchTask#layoutFree()}: the network's constant
 * weights) of at least {@link #MIN_WEIGHT_BYTES}; its eligible splits are the register-tile group's spatial splits
 * ({@link RegisterTileSizes#groups}) whose axis appears in none of that input's index expressions.
 */
public final class WeightStationaryTiles {
    private WeightStationaryTiles() {}

    /** The smallest constant input that makes a stage weight-heavy: about a core's L2 on the CPUs Kiln targets. */
    public static final long MIN_WEIGHT_BYTES = 1L << 20;

    /**
     * The split steps of {@code group} (a register-tile group of {@code steps}, as {@link RegisterTileSizes#groups}
     * finds them) over axes that index none of the stage's layout-free inputs of at least {@link #MIN_WEIGHT_BYTES};
     * empty when the stage reads no such input.
     */
    public static List<Integer> splits(SearchTask task, List<Step> steps, RegisterTileSizes.Group group) {
        if (task.layoutFree().isEmpty()) return List.of();
        List<String> heavy = new ArrayList<>();
        for (int a : task.layoutFree()) {
            Tensor t = task.dag().arguments().get(a);
            if (t.shape().numElements() * t.dtype().bytes() >= MIN_WEIGHT_BYTES) heavy.add(t.name());
        }
        if (heavy.isEmpty()) return List.of();
        // each split's axis, read from the state just before it (multi-level tiling splits the stage's own axes)
        Map<Integer, String> axisOf = new HashMap<>();
        ComputeOp op = null;
        LoopState s = LoopState.initial(task.dag());
        for (int i = 0; i < steps.size(); i++) {
            Step step = steps.get(i);
            if (step instanceof SplitStep sp && group.splitSteps().contains(i)) {
                Stage st = s.stage(sp.stageId());
                axisOf.put(i, st.iter(sp.iterId()).name());
                op = st.computeOp();
            }
            s = s.apply(step);
        }
        if (op == null) return List.of();
        List<List<Expr>> reads = new ArrayList<>();
        for (Expr body : op.bodies())
            Exprs.forEach(body, e -> {
                if (e instanceof TensorRead r && heavy.contains(r.tensor().name())) reads.add(r.indices());
            });
        if (reads.isEmpty()) return List.of();
        List<Integer> out = new ArrayList<>();
        for (int at : group.splitSteps()) {
            IterVar axis = axis(op, axisOf.get(at));
            if (axis != null && axis.extent() > 1 && !indexes(reads, axis)) out.add(at);
        }
        return List.copyOf(out);
    }

    private static IterVar axis(ComputeOp op, String name) {
        for (IterVar v : op.axes()) if (v.name().equals(name)) return v;
        return null;
    }

    private static boolean indexes(List<List<Expr>> reads, IterVar axis) {
        for (List<Expr> idx : reads) for (Expr e : idx) if (Exprs.uses(e, axis)) return true;
        return false;
    }
}
