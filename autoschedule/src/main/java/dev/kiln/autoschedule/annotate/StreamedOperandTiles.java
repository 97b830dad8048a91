package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IterVar;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntPredicate;

/**
 * Tile draws for a stage dominated by one operand (Kiln's addition to Ansor's tile-size sampling): a
 * conv of the deep ResNet layers reads 2-9 MB of weights and a few hundred KB of activations. In the
 * "SSRSRS" structure every level-1 spatial loop sits outside the outer reduction loop, so a level-1
 * loop over an axis the weights do not depend on (a row, a column, the batch) streams the weight block
 * once per iteration: the search's best program for ResNet-50's first 7x7 3x3 conv re-read its 2.4 MB
 * channel block for each of the 7 output rows (1.03 ms cold, against 0.80 for the same tiles with the
 * rows one level in, each 295 KB block of the weights read once and reused for all rows from L2).
 * Uniform draws rarely put every such factor at 1 together. This class finds, per multi-level-tiled
 * stage whose largest operand has at least {@link #DOMINANCE} times the elements of every other, the
 * undecided splits of the spatial loops that operand is not indexed by ({@link #groups});
 * {@link InitFillTileSize} draws their level-1 tile as 1 for a share of the samples, so all reuse of
 * the operand falls inside the reduction block.
 */
public final class StreamedOperandTiles {
    private StreamedOperandTiles() {}

    /** How many times the elements of every other operand the streamed one must have. */
    public static final long DOMINANCE = 4;

    /** The splits of one stage whose level-1 tile the draw sets to 1, and the operand that decides them. */
    public record Group(String stage, String operand, List<Integer> splitSteps) {
        public Group {
            splitSteps = List.copyOf(splitSteps);
        }
    }

    /** The groups of a sketch's undecided splits. */
    public static List<Group> groups(ComputeDAG dag, Sketch sketch) {
        return groups(dag, sketch.state().steps(), InnermostTiles.undecided(sketch));
    }

    private static List<Group> groups(ComputeDAG dag, List<Step> history, IntPredicate eligible) {
        Map<String, List<Integer>> splits = new LinkedHashMap<>();
        Map<String, String> operands = new HashMap<>();
        Map<String, Set<String>> streamedAxes = new HashMap<>();
        LoopState t = LoopState.initial(dag);
        for (int i = 0; i < history.size(); i++) {
            Step step = history.get(i);
            if (step instanceof SplitStep sp && sp.lengths().size() >= 2 && sp.extent() != null && eligible.test(i)) {
                Stage st = t.stage(sp.stageId());
                if (!st.isPlaceholder()
                        && StagePredicates.hasReduceIter(st)
                        && st.iter(sp.iterId()).kind() == IterKind.SPATIAL) {
                    LoopState before = t;
                    Set<String> axes = streamedAxes.computeIfAbsent(st.name(), k -> {
                        Dominant d = dominant(before, st.computeOp());
                        if (d == null) return Set.of();
                        operands.put(st.name(), d.name());
                        return d.freeAxes();
                    });
                    if (axes.contains(st.iter(sp.iterId()).name()))
                        splits.computeIfAbsent(st.name(), k -> new ArrayList<>())
                                .add(i);
                }
            }
            t = t.apply(step);
        }
        List<Group> out = new ArrayList<>();
        splits.forEach((stage, steps) -> out.add(new Group(stage, operands.get(stage), steps)));
        return List.copyOf(out);
    }

    /** The dominant operand's name and the spatial axes of the reader none of its reads is indexed by. */
    private record Dominant(String name, Set<String> freeAxes) {}

    private static Dominant dominant(LoopState s, ComputeOp op) {
        Map<Operation, List<List<Expr>>> reads = AccessAnalyzer.of(s).readFrom(op);
        if (reads.size() < 2) return null;
        Operation best = null;
        long bestSize = -1, second = 0;
        for (Operation p : reads.keySet()) {
            long n = elements(p);
            if (n > bestSize) {
                second = Math.max(second, bestSize);
                bestSize = n;
                best = p;
            } else {
                second = Math.max(second, n);
            }
        }
        if (best == null || bestSize < DOMINANCE * Math.max(1, second)) return null;
        Set<String> free = new HashSet<>();
        for (IterVar axis : op.axes()) {
            boolean used = false;
            for (List<Expr> idx : reads.get(best)) for (Expr e : idx) used |= Exprs.uses(e, axis);
            if (!used) free.add(axis.name());
        }
        return free.isEmpty() ? null : new Dominant(best.name(), Set.copyOf(free));
    }

    private static long elements(Operation p) {
        long n = 0;
        for (Tensor t : p.outputs()) {
            long e = 1;
            for (long d : t.shape().toArray()) e *= d;
            n += e;
        }
        return n;
    }
}
