package dev.kiln.autoschedule.log;

import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.CostStatistic;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.te.ComputeDAG;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One line of a {@link TuningLog}: one measurement of one program. It names the workload and the
 * full target it was measured for (with the hardware parameters the search used), holds the
 * schedule's steps as JSON (so it can be replayed on any DAG with the same workload key), the
 * measured seconds of each repeat, the error (kind {@code "NONE"} when the run was valid), the
 * compile time, the wall time of the whole measurement, and when it was taken.
 *
 * @param version         the log format ({@link LogFormat#VERSION} for records this code writes)
 * @param workloadKey     {@code ComputeDAG.workloadKey()} of the tuned computation
 * @param target          the full target string ({@code Target.toString()})
 * @param hardware        {@code HardwareParams.toLogArray()} of the search
 * @param steps           {@code Schedule.stepsJson()} of the program (copied in and out, numbers in the
 *                        form JSON reading gives them, so that a record equals itself read back)
 * @param costs           seconds of each repeat; empty when the measurement failed
 * @param errorKind       {@code "NONE"} for a valid measurement, else the kind of error (LOWER, COMPILE, ...)
 * @param errorMessage    what went wrong; empty when nothing did
 * @param compileSeconds  time spent lowering and compiling the program
 * @param wallSeconds     time the whole measurement took (build, runs, checks)
 * @param timestamp       when the measurement finished
 * @param kind            {@link #TRIAL} for a search's measurement of a new program (one trial), or
 *                        {@link #REMEASURE} for a later measurement of a program already in the log
 *                        (the re-measure of a search's best programs before it reports): not a
 *                        trial; it adds one more cost to that program ({@link ProgramCosts})
 * @param transferFrom    the workload key of the similar task whose program this one was adapted from
 *                        ({@link dev.kiln.autoschedule.transfer.TransferPolicy}), or empty for a program of the
 *                        task's own search
 */
public record LogRecord(
        String version,
        String workloadKey,
        String target,
        int[] hardware,
        ArrayNode steps,
        List<Double> costs,
        String errorKind,
        String errorMessage,
        double compileSeconds,
        double wallSeconds,
        Instant timestamp,
        String kind,
        String transferFrom) {
    /** The error kind of a valid measurement. */
    public static final String NO_ERROR = "NONE";
    /** The kind of a search's trial (the only kind before issue 13; a line without {@code kind} is one). */
    public static final String TRIAL = "trial";
    /** The kind of a re-measurement of a program already measured. */
    public static final String REMEASURE = "remeasure";

    /**
     * The canonical constructor: every field given (what {@link LogFormat} reads back). Code that makes records uses
     * {@link #builder()} (a trial of this format version, of the task's own search, unless told otherwise) or
     * {@link #of(SearchTask, Schedule, MeasureResult)}.
     */
    public LogRecord {
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(workloadKey, "workloadKey");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(hardware, "hardware");
        Objects.requireNonNull(steps, "steps");
        Objects.requireNonNull(errorKind, "errorKind");
        Objects.requireNonNull(timestamp, "timestamp");
        Objects.requireNonNull(kind, "kind");
        if (!kind.equals(TRIAL) && !kind.equals(REMEASURE)) {
            throw new KilnException(
                    "log record kind '" + kind + "' is neither '" + TRIAL + "' nor '" + REMEASURE + "'");
        }
        hardware = hardware.clone();
        steps = LogFormat.canonical(steps);
        costs = List.copyOf(costs);
        errorMessage = errorMessage == null ? "" : errorMessage;
        transferFrom = transferFrom == null ? "" : transferFrom;
        if (errorKind.equals(NO_ERROR) && costs.isEmpty()) {
            throw new KilnException("a valid measurement of workload " + workloadKey + " needs at least one cost");
        }
        for (double c : costs) {
            if (!(c >= 0) || Double.isInfinite(c)) {
                throw new KilnException(
                        "measured cost " + c + " of workload " + workloadKey + " is not a finite non-negative time");
            }
        }
    }

    @Override
    public int[] hardware() {
        return hardware.clone();
    }

    @Override
    public ArrayNode steps() {
        return steps.deepCopy();
    }

    /** Whether the program ran and gave the right numbers. */
    public boolean isValid() {
        return errorKind.equals(NO_ERROR);
    }

    /** Whether this is a re-measurement of a program already in the log (not a trial). */
    public boolean isRemeasure() {
        return kind.equals(REMEASURE);
    }

    /** The same record as a re-measurement. */
    public LogRecord asRemeasure() {
        return toBuilder().kind(REMEASURE).build();
    }

    /** Whether the program was adapted from a similar task's ({@link #transferFrom()} not empty). */
    public boolean isTransferred() {
        return !transferFrom.isEmpty();
    }

    /** The same record marked as adapted from the task with workload key {@code from} ("" for none). */
    public LogRecord withTransferFrom(String from) {
        return toBuilder().transferFrom(from).build();
    }

    /**
     * This measurement's time: {@code CostStatistic.DEFAULT} of its repeats;
     * {@link Double#POSITIVE_INFINITY} for a failed measurement. A program measured more than once
     * costs the median of its measurements ({@link ProgramCosts}).
     */
    public double seconds() {
        if (!isValid()) return Double.POSITIVE_INFINITY;
        return CostStatistic.DEFAULT.of(
                costs.stream().mapToDouble(Double::doubleValue).toArray());
    }

    /** Billions of floating-point operations per second for a computation of {@code flops}; 0 when invalid. */
    public double gflops(long flops) {
        double s = seconds();
        return Double.isFinite(s) && s > 0 ? flops / s / 1e9 : 0;
    }

    /** The schedule of this record on {@code dag}, which must have the record's workload key. */
    public Schedule schedule(ComputeDAG dag) {
        if (!dag.workloadKey().equals(workloadKey)) {
            throw new KilnException(
                    "log record of workload " + workloadKey + " cannot be applied to workload " + dag.workloadKey());
        }
        return Schedule.fromSteps(steps, dag);
    }

    /** The record of one measurement of {@code schedule}, a program of {@code task}. */
    public static LogRecord of(SearchTask task, Schedule schedule, MeasureResult r) {
        return builder()
                .workloadKey(task.workloadKey())
                .target(task.targetDescription())
                .hardware(task.hardware().toLogArray())
                .steps(schedule.stepsJson())
                .costs(Arrays.stream(r.costsSeconds()).boxed().toList())
                .error(r.error().name(), r.errorMessage())
                .compileSeconds(r.compileSeconds())
                .wallSeconds(r.wallSeconds())
                .timestamp(Instant.ofEpochMilli(r.timestampMillis()))
                .build();
    }

    /**
     * The schedule of this record for {@code task}, whose workload key it must have (a task with
     * layout-free arguments has its own key on the same DAG, see {@link SearchTask#withLayoutFree}).
     */
    public Schedule schedule(SearchTask task) {
        if (!task.workloadKey().equals(workloadKey)) {
            throw new KilnException(
                    "log record of workload " + workloadKey + " cannot be applied to task " + task.workloadKey());
        }
        return Schedule.fromSteps(steps, task.dag());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LogRecord r
                && version.equals(r.version)
                && workloadKey.equals(r.workloadKey)
                && target.equals(r.target)
                && Arrays.equals(hardware, r.hardware)
                && steps.equals(r.steps)
                && costs.equals(r.costs)
                && errorKind.equals(r.errorKind)
                && errorMessage.equals(r.errorMessage)
                && Double.compare(compileSeconds, r.compileSeconds) == 0
                && Double.compare(wallSeconds, r.wallSeconds) == 0
                && timestamp.equals(r.timestamp)
                && kind.equals(r.kind)
                && transferFrom.equals(r.transferFrom);
    }

    @Override
    public int hashCode() {
        return Objects.hash(workloadKey, target, Arrays.hashCode(hardware), steps, costs, errorKind, timestamp);
    }

    @Override
    public String toString() {
        return LogFormat.toLine(this);
    }

    /**
     * A builder of a record: by default a valid ({@link #NO_ERROR}) {@link #TRIAL} of this code's format version
     * ({@link LogFormat#VERSION}) with no costs, no compile or wall time and no transfer; the workload key, target,
     * hardware, steps and timestamp must be set.
     */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder that starts from this record's fields. */
    public Builder toBuilder() {
        return new Builder()
                .version(version)
                .workloadKey(workloadKey)
                .target(target)
                .hardware(hardware)
                .steps(steps)
                .costs(costs)
                .error(errorKind, errorMessage)
                .compileSeconds(compileSeconds)
                .wallSeconds(wallSeconds)
                .timestamp(timestamp)
                .kind(kind)
                .transferFrom(transferFrom);
    }

    /** Builds a {@link LogRecord}; {@link #build()} checks it as the canonical constructor does. */
    public static final class Builder {
        private String version = LogFormat.VERSION;
        private String workloadKey;
        private String target;
        private int[] hardware;
        private ArrayNode steps;
        private List<Double> costs = List.of();
        private String errorKind = NO_ERROR;
        private String errorMessage = "";
        private double compileSeconds;
        private double wallSeconds;
        private Instant timestamp;
        private String kind = TRIAL;
        private String transferFrom = "";

        private Builder() {}

        /** The log format version (default {@link LogFormat#VERSION}). */
        public Builder version(String v) {
            version = v;
            return this;
        }

        /** {@code ComputeDAG.workloadKey()} of the tuned computation. */
        public Builder workloadKey(String k) {
            workloadKey = k;
            return this;
        }

        /** The full target string ({@code Target.toString()}). */
        public Builder target(String t) {
            target = t;
            return this;
        }

        /** {@code HardwareParams.toLogArray()} of the search. */
        public Builder hardware(int[] h) {
            hardware = h;
            return this;
        }

        /** {@code Schedule.stepsJson()} of the program. */
        public Builder steps(ArrayNode s) {
            steps = s;
            return this;
        }

        /** Seconds of each repeat (default none: a failed measurement). */
        public Builder costs(List<Double> c) {
            costs = c;
            return this;
        }

        /** The error kind ({@link #NO_ERROR} for a valid measurement, the default) and its message. */
        public Builder error(String kind, String message) {
            errorKind = kind;
            errorMessage = message;
            return this;
        }

        /** Time spent lowering and compiling the program (default 0). */
        public Builder compileSeconds(double s) {
            compileSeconds = s;
            return this;
        }

        /** Time the whole measurement took (default 0). */
        public Builder wallSeconds(double s) {
            wallSeconds = s;
            return this;
        }

        /** When the measurement finished. */
        public Builder timestamp(Instant t) {
            timestamp = t;
            return this;
        }

        /** {@link #TRIAL} (the default) or {@link #REMEASURE}. */
        public Builder kind(String k) {
            kind = k;
            return this;
        }

        /** The workload key of the task the program was adapted from (default "": the task's own search). */
        public Builder transferFrom(String from) {
            transferFrom = from;
            return this;
        }

        /** The record (checked: a null field or a valid measurement without costs throws, naming it). */
        public LogRecord build() {
            return new LogRecord(
                    version,
                    workloadKey,
                    target,
                    hardware,
                    steps,
                    costs,
                    errorKind,
                    errorMessage,
                    compileSeconds,
                    wallSeconds,
                    timestamp,
                    kind,
                    transferFrom);
        }
    }
}
