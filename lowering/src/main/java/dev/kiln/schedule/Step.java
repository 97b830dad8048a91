package dev.kiln.schedule;

/**
 * One transform of a schedule. Steps name stages and loops by their index in the state they are
 * applied to (never by object), so a step list replays on a freshly built DAG, serialises to
 * JSON and prints as Java source. Tunable knobs (tile sizes, unroll depth) are decisions stored in
 * the steps. The record prefixes ("SP", "FU", ...) and fields follow Ansor's log format.
 */
public sealed interface Step
        permits SplitStep,
                FollowSplitStep,
                FollowFusedSplitStep,
                FuseStep,
                ReorderStep,
                ComputeAtStep,
                ComputeInlineStep,
                ComputeRootStep,
                CacheReadStep,
                CacheWriteStep,
                RfactorStep,
                AnnotationStep,
                PragmaStep,
                StorageAlignStep,
                StorageBlockStep,
                TensorizeStep {

    /** The index of the stage the step transforms, in the state it is applied to. */
    int stageId();

    /** Applies the step; throws {@link ScheduleException} with the reason if it is illegal. */
    LoopState applyTo(LoopState state);

    /** A short description for error messages: {@code split(C, i, [16, 4])}. */
    String describe(LoopState state);
}
