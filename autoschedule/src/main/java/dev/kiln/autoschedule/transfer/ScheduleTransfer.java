package dev.kiln.autoschedule.transfer;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.InferBound;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.InitChangeComputeLocation;
import dev.kiln.autoschedule.annotate.NestedParallel;
import dev.kiln.autoschedule.measure.ScheduleLowerer;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Adapts a program of one task to a similar task (same {@link SearchTask#structureKey()}): its steps are
 * replayed one by one on the other task's DAG, each {@link SplitStep} refitted to the extent the loop has
 * there ({@link #refit}); follow-splits follow their refitted source; every other step is kept as it is. A
 * step that does not apply drops the program. The result is checked like a sampled program: bound inference,
 * no nested parallel loop, and (with {@code lower}) the target's lowering of the program the task measures
 * (layout-free weights packed).
 */
public final class ScheduleTransfer {
    private ScheduleTransfer() {}

    /** Why a program could not be adapted; {@link #adapt} returns empty instead of throwing it. */
    public static final class NotTransferable extends KilnException {
        NotTransferable(String message) {
            super(message);
        }
    }

    /** {@code from} adapted to {@code to} and checked, or empty when a step does not apply or the check fails. */
    public static Optional<Candidate> adapt(Schedule from, SearchTask to, boolean lower) {
        try {
            return Optional.of(adaptOrThrow(from, to, lower));
        } catch (KilnException | ArithmeticException e) {
            return Optional.empty();
        }
    }

    /** {@link #adapt}, throwing a {@link KilnException} saying which step failed and why. */
    public static Candidate adaptOrThrow(Schedule from, SearchTask to, boolean lower) {
        LoopState s = LoopState.initial(to.dag());
        List<Step> steps = from.steps();
        for (int i = 0; i < steps.size(); i++) {
            Step st = steps.get(i) instanceof SplitStep sp ? refitted(sp, s) : steps.get(i);
            try {
                s = s.apply(st);
            } catch (KilnException e) {
                throw new NotTransferable(
                        "step " + i + " " + st + " does not apply to task " + to.workloadKey() + ": " + e.getMessage());
            }
        }
        if (NestedParallel.has(s)) throw new NotTransferable("a parallel loop runs inside another");
        LoopState inferred = InferBound.apply(s);
        if (!to.target().kind().isGpu() && InitChangeComputeLocation.padsWholeInputAtOnce(inferred)) {
            throw new NotTransferable("a padding its consumer reads without reuse is computed whole at once");
        }
        Candidate c = Candidate.ofInferred(inferred);
        if (lower) {
            ScheduleLowerer.forTarget(to.target())
                    .lower(to, to.rewriteLayouts(c.schedule()).schedule());
        }
        return c;
    }

    /** The split with its lengths refitted to the extent its loop has in {@code s} (kept when unknown). */
    private static SplitStep refitted(SplitStep sp, LoopState s) {
        if (!sp.isConcrete() || sp.stageId() < 0 || sp.stageId() >= s.stages().size()) return sp;
        var stage = s.stage(sp.stageId());
        if (sp.iterId() < 0 || sp.iterId() >= stage.iters().size()) return sp;
        Iter it = stage.iter(sp.iterId());
        if (it.extent() == null) return sp;
        List<Integer> lengths = sp.lengths();
        List<Integer> fitted;
        if (sp.innerToOuter()) {
            fitted = refit(lengths.reversed(), it.extent()).reversed();
        } else {
            fitted = refit(lengths, it.extent());
        }
        return new SplitStep(sp.stageId(), sp.iterId(), it.extent(), fitted, sp.innerToOuter());
    }

    /**
     * The refit rule. {@code factors} are a split's lengths taken from the innermost tile outwards (for a
     * split by parts: from the outermost part inwards), {@code extent} the loop's extent on the new task. Each
     * factor is kept when it divides what is left of the extent, else replaced by the largest divisor of what
     * is left that is not above it (so vector widths that divide stay, and nothing grows); what is left is
     * then divided by it. The loop left over takes the rest, so the tiles always factor the extent exactly.
     */
    public static List<Integer> refit(List<Integer> factors, long extent) {
        if (extent < 1) throw new NotTransferable("a loop of extent " + extent + " cannot be split");
        List<Integer> out = new ArrayList<>();
        long left = extent;
        for (int f : factors) {
            int g = (int) Math.min(f, left);
            while (g > 1 && left % g != 0) g--;
            g = Math.max(g, 1);
            out.add(g);
            left /= g;
        }
        return out;
    }
}
