package dev.kiln.autoschedule.scheduler;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.ir.KilnException;
import dev.kiln.te.Tensor;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * One task of a network for the {@link TaskScheduler}: a fused subgraph to tune, how often it
 * occurs in the network, its similarity tag and a description for the progress table.
 *
 * @param task        the search task (DAG, target, hardware, workload key)
 * @param weight      how often the subgraph occurs in the network (positive): its best latency
 *                    counts this many times in the end-to-end estimate
 * @param tag         the similarity tag (Ansor's {@code auto_scheduler_task_scheduler_tag}, e.g.
 *                    {@code "conv2d_nchw"}); tasks with the same tag and FLOPs within a factor of
 *                    1.618 form a similarity group (see {@link SimilarityGroups}); empty for none
 * @param description a human name for tables and messages (e.g. {@code "conv2d 56x56x64 + relu"})
 */
public record TuningTask(SearchTask task, double weight, String tag, String description) {
    public TuningTask {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(tag, "tag");
        Objects.requireNonNull(description, "description");
        if (!(weight > 0) || Double.isInfinite(weight)) {
            throw new KilnException("tuning task '" + description + "' (" + task.workloadKey()
                    + "): the weight must be a " + "positive finite number, got " + weight);
        }
    }

    /** A task without a similarity tag, described by the names of its outputs. */
    public static TuningTask of(SearchTask task, double weight) {
        return new TuningTask(task, weight, "", outputNames(task));
    }

    /** A task with a similarity tag, described by the names of its outputs. */
    public static TuningTask of(SearchTask task, double weight, String tag) {
        return new TuningTask(task, weight, tag, outputNames(task));
    }

    /** The FLOPs of one run of the task's computation. */
    public long flops() {
        return task.dag().flopCount();
    }

    private static String outputNames(SearchTask task) {
        return task.dag().outputs().stream().map(Tensor::name).collect(Collectors.joining(","));
    }
}
