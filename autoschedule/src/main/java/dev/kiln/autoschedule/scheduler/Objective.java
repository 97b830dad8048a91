package dev.kiln.autoschedule.scheduler;

/**
 * What the task scheduler minimises: an estimate of the network's end-to-end latency from the
 * best latency of every task (Ansor's {@code objective_func}). Any function of the latency vector
 * will do, as long as it does not decrease when a latency grows (the gradient strategy needs
 * {@code df/dg_i >= 0}; it throws otherwise). Not to be confused with the cost model's training
 * objective ({@code dev.kiln.autoschedule.model.Objective}).
 *
 * <p>A task without a valid program yet has latency {@link SchedulerLoop#NO_LATENCY} (1e10 s,
 * Ansor's placeholder) in the vector.
 */
@FunctionalInterface
public interface Objective {

    /** The estimate, in seconds, for best latencies {@code latency} (seconds) of tasks of weights {@code weight}. */
    double evaluate(double[] latency, double[] weight);

    /** Ansor's default: the sum of weight x latency. */
    static Objective weightedSum() {
        return (latency, weight) -> {
            double s = 0;
            for (int i = 0; i < latency.length; i++) s += weight[i] * latency[i];
            return s;
        };
    }
}
