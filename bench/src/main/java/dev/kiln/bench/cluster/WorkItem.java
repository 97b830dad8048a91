package dev.kiln.bench.cluster;

/**
 * One program a job asks the cluster to measure: a real program (the request text of {@link
 * dev.kiln.autoschedule.measure.RemoteMeasurement.Program} and the key of its workload) or, when {@code program} is
 * empty, a simulated one that the worker measures by sleeping {@code simulatedSeconds}.
 */
public record WorkItem(
        String workloadKey, String program, double timeoutSeconds, double simulatedSeconds, double simulatedCost) {

    public static WorkItem simulated(double seconds, double cost) {
        return new WorkItem("", "", seconds * 4 + 10, seconds, cost);
    }

    boolean isSimulated() {
        return program.isEmpty();
    }
}
