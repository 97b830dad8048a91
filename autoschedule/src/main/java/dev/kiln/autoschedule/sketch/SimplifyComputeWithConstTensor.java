package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.nn.Winograd;
import dev.kiln.schedule.AnnotationStep;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.ComputeInlineStep;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ReorderStep;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeOp;
import java.util.ArrayList;
import java.util.List;

/**
 * Ansor's SimplifyComputeWithConstTensor, for the stages that compute with a small constant matrix written into their
 * bodies (Winograd's input and output transforms, {@link Winograd#unrolledAxes}): the loops that index the matrix
 * are unrolled, so that its selects and the sums' non-zero conditions fold to constants when the program is lowered,
 * and every other spatial loop is split in two (outer parts, inner parts, then the unrolled loops). Kiln's CPU form
 * differs in one point: the innermost spatial axis (the channels of an NHWC transform), when it is a whole number of
 * vectors, keeps a vector-wide inner part below the unrolled loops, so that every term of a transform is one vector
 * operation and the annotation vectorises it; Ansor leaves the unrolled loops innermost. The input transform's
 * padding is inlined into it (the random annotation could compute it at a loop inside the unrolled ones, which would
 * be unrolled with them past {@code UnrollLoops}' size cap). The rule applies to those stages only and skips the
 * rules after it, as Ansor's does.
 */
public record SimplifyComputeWithConstTensor() implements SketchRule {
    @Override
    public String name() {
        return "SimplifyComputeWithConstTensor";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        Stage st = state.stage(stageId);
        if (st.isPlaceholder()) return Condition.SKIP;
        // the padding this rule inlined into a transform: nothing more to do on it
        if (st.computeAt() == ComputeAtKind.INLINED && paddedInputOf(state, stageId) >= 0) {
            return Condition.APPLY_AND_SKIP_REST;
        }
        if (st.isTiled()) return Condition.SKIP;
        ComputeOp op = st.computeOp();
        if (Winograd.unrolledAxes(op).isEmpty()) return Condition.SKIP;
        // an untouched stage: one loop per axis, named after it
        if (st.iters().size() != op.axes().size() + op.reduceAxes().size()) return Condition.SKIP;
        return Condition.APPLY_AND_SKIP_REST;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        Stage st = state.stage(stageId);
        if (st.computeAt() == ComputeAtKind.INLINED) return List.of(new Derivation(state, stageId - 1));
        ComputeOp op = st.computeOp();
        List<String> unrolled = Winograd.unrolledAxes(op);
        List<String> spatial = new ArrayList<>();
        for (var it : st.iters()) {
            if (it.kind() == IterKind.SPATIAL && !unrolled.contains(it.name())) spatial.add(it.name());
        }
        String last = op.axes().getLast().name();
        Long lastExtent = op.axes().getLast().extent();
        int lanes = task.hardware().lanes(op.outputs().getFirst().dtype().bytes());
        boolean vectorInner = lanes > 1 && spatial.contains(last) && lastExtent != null && lastExtent % lanes == 0;
        LoopState s = state;
        for (String name : spatial) {
            int at = s.stage(stageId).indexOf(name);
            List<Integer> len = new ArrayList<>();
            len.add(vectorInner && name.equals(last) ? lanes : null);
            s = s.apply(new SplitStep(stageId, at, s.stage(stageId).iter(at).extent(), len, true));
        }
        Stage split = s.stage(stageId);
        List<Integer> order = new ArrayList<>();
        for (String name : spatial) order.add(split.indexOf(name + ".0"));
        for (String name : spatial) if (!(vectorInner && name.equals(last))) order.add(split.indexOf(name + ".1"));
        for (var it : split.iters()) {
            if (unrolled.contains(it.name()) && it.kind() == IterKind.SPATIAL) order.add(split.indexOf(it.name()));
        }
        for (var it : split.iters()) {
            if (it.kind() != IterKind.SPATIAL) order.add(split.indexOf(it.name()));
        }
        if (vectorInner) order.add(split.indexOf(last + ".1"));
        s = s.apply(new ReorderStep(stageId, order));
        for (String name : unrolled) {
            s = s.apply(new AnnotationStep(stageId, s.stage(stageId).indexOf(name), IterAnnotation.UNROLL));
        }
        // the input transform's padding is inlined: computed at a loop inside the unrolled ones (the annotation's
        // choice for a stage with selects), it would be unrolled with them, past the unroller's size cap
        for (int id = 0; id < s.stages().size(); id++) {
            if (paddedInputOf(s, id) == stageId) s = s.apply(new ComputeInlineStep(id));
        }
        return List.of(new Derivation(s, stageId - 1));
    }

    /**
     * The stage whose constant-matrix transform reads stage {@code id} when {@code id} is a padding stage ({@link
     * dev.kiln.nn.Pad}, tag "pad") read by that transform alone; -1 otherwise.
     */
    static int paddedInputOf(LoopState state, int id) {
        Stage st = state.stage(id);
        if (st.isPlaceholder() || !st.computeOp().tag().equals("pad")) return -1;
        int reader = -1;
        for (int j = 0; j < state.stages().size(); j++) {
            Stage r = state.stage(j);
            if (r.isPlaceholder()
                    || !r.computeOp().inputTensors().contains(st.op().outputs().getFirst())) continue;
            if (reader >= 0 || Winograd.unrolledAxes(r.computeOp()).isEmpty()) return -1;
            reader = j;
        }
        return reader;
    }
}
