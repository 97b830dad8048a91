package dev.kiln.autoschedule.mutation;

import dev.kiln.ir.KilnException;
import java.util.Objects;

/**
 * A mutation rule and its weight among a target's mutations (TVM's {@code PopulationMutationRule}
 * with its probability): evolutionary search picks the rule of a mutation with probability
 * {@code weight / sum of the weights}.
 */
public record WeightedMutation(MutationRule rule, double weight) {
    public WeightedMutation {
        Objects.requireNonNull(rule, "rule");
        if (!(weight > 0) || Double.isInfinite(weight)) {
            throw new KilnException("mutation " + rule.name() + ": weight must be positive and finite, got " + weight);
        }
    }
}
