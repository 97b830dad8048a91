package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.PragmaStep;
import dev.kiln.schedule.Stage;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Gives every stage that has a reduction loop (and is neither inlined nor an input) an
 * {@code auto_unroll_max_step} pragma on its outermost loop, the value drawn uniformly from
 * {@link #CPU_STEPS} (Ansor's InitUnroll; Kiln operations carry no always-unroll attribute).
 */
public record InitUnroll(List<Integer> choices) implements InitRule {
    public static final String NAME = "InitUnroll";
    /** Ansor's CPU choices. */
    public static final List<Integer> CPU_STEPS = List.of(0, 16, 64, 512);
    /**
     * The JVM target's choices: Ansor's CPU ones without 512, whose unrolled bodies can pass HotSpot's 8000-byte
     * limit for JIT compilation and then run interpreted (a tuned GEMM's 43 KB method: 6.9 s per call).
     */
    public static final List<Integer> JVM_STEPS = List.of(0, 16, 64);
    /** Ansor's GPU choices. */
    public static final List<Integer> GPU_STEPS = List.of(0, 16, 64, 512, 1024);

    public InitUnroll {
        choices = List.copyOf(choices);
        if (choices.isEmpty()) throw new KilnException("InitUnroll needs at least one auto_unroll_max_step choice");
    }

    public static InitUnroll cpu() {
        return new InitUnroll(CPU_STEPS);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public LoopState apply(SearchTask task, LoopState state, SplittableRandom rng) {
        LoopState s = state;
        try {
            for (int id = 0; id < s.stages().size(); id++) {
                Stage st = s.stage(id);
                if (st.isPlaceholder() || st.computeAt() == ComputeAtKind.INLINED) continue;
                if (!StagePredicates.hasReduceIter(st)) continue;
                int v = choices.get(rng.nextInt(choices.size()));
                s = s.apply(new PragmaStep(id, 0, PragmaStep.AUTO_UNROLL + "$" + v));
            }
            return s;
        } catch (KilnException e) {
            throw new InvalidSample(NAME, e.getMessage());
        }
    }
}
