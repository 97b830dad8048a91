package dev.kiln.bench.cluster;

import java.util.List;
import java.util.Map;

/**
 * What a tuning job's dispatcher has seen so far.
 *
 * @param dispatched         programs handed to workers (a re-queued program counts each time)
 * @param completed          programs with a result
 * @param requeued           programs taken back from a worker that died, left, went silent past its deadline, or
 *                           whose wrong result was checked on another worker
 * @param duplicatesDropped  late results of programs already answered by another worker, not used
 * @param byWorker           results used, by worker
 * @param faults             workers reported: a wrong result that another worker did not reproduce (the worker is
 *                           then sent no more work), a missed deadline, a worker of another target asking for work
 * @param quarantined        the workers sent no more work
 * @param holding            programs each worker holds now (measuring, or asked for ahead of time), by worker
 */
public record JobReport(
        long dispatched,
        long completed,
        long requeued,
        long duplicatesDropped,
        Map<String, Long> byWorker,
        List<String> faults,
        List<String> quarantined,
        Map<String, Integer> holding) {
    public JobReport {
        byWorker = Map.copyOf(byWorker);
        holding = Map.copyOf(holding);
        faults = List.copyOf(faults);
        quarantined = List.copyOf(quarantined);
    }
}
