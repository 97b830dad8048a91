package dev.kiln.autoschedule.annotate;

/**
 * Thrown by an annotation rule when the sample it works on is not a valid program (a compute
 * location that does not enclose a consumer, bounds that cannot be inferred); the sampler drops
 * the sample and counts it under the rule's name.
 */
public final class InvalidSample extends RuntimeException {
    private final String rule;

    public InvalidSample(String rule, String reason) {
        super(rule + ": " + reason, null, false, false);
        this.rule = rule;
    }

    /** The name of the rule that rejected the sample. */
    public String rule() {
        return rule;
    }
}
