package dev.kiln.schedule;

import java.util.Objects;

/**
 * {@code AN}: marks a loop parallel, vectorized, unrolled, or bound to a GPU thread axis. A loop
 * is annotated at most once; vectorize and unroll need a constant extent; parallel on a
 * reduction loop would race and is refused (rfactor it instead).
 */
public record AnnotationStep(int stageId, int iterId, IterAnnotation annotation) implements Step {
    public AnnotationStep {
        Objects.requireNonNull(annotation, "annotation");
    }

    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        Iter it = StepChecks.loop(st, iterId);
        if (annotation == IterAnnotation.NONE)
            throw new ScheduleException("annotate needs an annotation other than 'for'");
        if (it.annotation() != IterAnnotation.NONE) {
            throw new ScheduleException("loop '" + it.name() + "' is already annotated "
                    + it.annotation().displayName());
        }
        if ((annotation == IterAnnotation.VECTORIZE || annotation == IterAnnotation.UNROLL) && it.extent() == null) {
            throw new ScheduleException(
                    "cannot " + annotation.displayName() + " loop '" + it.name() + "': its extent is not a constant");
        }
        if (annotation == IterAnnotation.PARALLEL && it.kind() != IterKind.SPATIAL) {
            throw new ScheduleException("parallel on loop '" + it.name() + "', which is a "
                    + it.kind().name().toLowerCase()
                    + " loop, would race on the accumulator; rfactor the reduction first");
        }
        return s.withStage(stageId, st.withIter(it.withAnnotation(annotation)));
    }

    @Override
    public String describe(LoopState s) {
        return annotation.displayName() + "(" + StepChecks.loopName(s, stageId, iterId) + ")";
    }
}
