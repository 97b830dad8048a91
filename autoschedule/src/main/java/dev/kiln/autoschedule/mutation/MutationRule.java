package dev.kiln.autoschedule.mutation;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import java.util.SplittableRandom;

/**
 * One of Ansor's mutations of a program: a changed decision, replayed. {@link #apply} returns the
 * child, or null when the rule does not apply to this program or the edited steps are not a
 * valid program (Ansor's "Invalid").
 */
public sealed interface MutationRule
        permits MutateTileSize,
                MutateAutoUnroll,
                MutateComputeLocation,
                MutateParallel,
                MutateRegisterTile,
                MutateKBlocking,
                MutateReductionTile {

    /** The rule's name, as in Ansor ("MutateTileSize"). */
    String name();

    /** A mutated child of {@code parent}, or null. */
    Candidate apply(SearchTask task, Candidate parent, SplittableRandom rng);
}
