package dev.kiln.autoschedule.measure;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Builds and times programs of a search task on one {@link Target}: the auto-scheduler's only way
 * to learn how fast a schedule is.
 *
 * <p>For each schedule of a batch, in order, a measurer lowers it, compiles it with the target's
 * {@link dev.kiln.target.Backend}, runs it on seeded random inputs, compares the output with the
 * interpreter's reference for the task (computed once per workload) and times it as
 * {@link MeasureOptions} says. A schedule that fails at any stage gives a {@link MeasureResult}
 * with its {@link MeasureError} and reason; it never throws, and the rest of the batch is still
 * measured. Only misuse throws a {@link dev.kiln.ir.KilnException}: a schedule of another
 * workload, a task for another target, a closed measurer, or a worker that cannot start at all.
 *
 * <p>{@link ProcessMeasurer} runs programs in a child JVM, so that a crashing or hanging program
 * cannot take the tuner down; {@link LocalMeasurer} runs them in this process, for tests and the
 * interpreter.
 */
public interface Measurer extends AutoCloseable {

    /** The target programs are compiled for and run on. */
    Target target();

    /** How programs are timed and checked. */
    MeasureOptions options();

    /**
     * Measures {@code schedules} (each for {@code task}'s DAG) and returns one result per
     * schedule, in the same order.
     */
    List<MeasureResult> measure(SearchTask task, List<Schedule> schedules);

    /**
     * Makes ready, before their first {@link #measure}, what measuring {@code tasks} needs once per workload (the
     * interpreter's reference outputs, a serial run each), on up to {@code threads} threads at once: a network's
     * tasks would otherwise each wait for their reference in turn on one core while the others idle (ResNet-50's
     * 27 references take about 44 s of interpreter time). Nothing is timed meanwhile. A task whose workload cannot
     * be made is left to fail at its first measure. The default does nothing (a measurer that makes nothing per
     * workload in this process, such as a cluster's).
     */
    default void prepare(List<SearchTask> tasks, int threads) {}

    /** Measures the schedules of {@code candidates}; one result per candidate, in order. */
    default List<MeasureResult> measureCandidates(SearchTask task, List<Candidate> candidates) {
        return measure(task, candidates.stream().map(Candidate::schedule).toList());
    }

    /**
     * Starts measuring {@code schedules} (each for {@code task}'s DAG) and returns at once a future
     * of one result per schedule, in the same order, for callers that keep the tuner busy while the
     * programs measure (the task scheduler's {@code overlapRounds}). The default measures
     * synchronously and returns a completed future, so the existing measurers need nothing more;
     * a measurer with its own workers (a cluster) sends the batch and returns. Misuse still throws
     * here; a failure on the way (the workers gone) completes the future exceptionally with a
     * {@link dev.kiln.ir.KilnException}.
     */
    default CompletableFuture<List<MeasureResult>> submit(SearchTask task, List<Schedule> schedules) {
        return CompletableFuture.completedFuture(measure(task, schedules));
    }

    /**
     * How many programs a synchronous caller should hand to {@link #measure} at once: 1 (the default) when nothing
     * is gained by more; a {@link ProcessMeasurer} that compiles a batch on several threads asks for a few per
     * thread, so that its compile threads stay busy.
     */
    default int batchSize() {
        return 1;
    }

    /** Whether {@link #submit} returns before the programs are measured (false: the synchronous default). */
    default boolean asynchronous() {
        return false;
    }

    /** Measures one schedule. */
    default MeasureResult measure(SearchTask task, Schedule schedule) {
        return measure(task, List.of(schedule)).getFirst();
    }

    /** Releases the worker (for {@link ProcessMeasurer}, stops the child JVM). */
    @Override
    void close();
}
