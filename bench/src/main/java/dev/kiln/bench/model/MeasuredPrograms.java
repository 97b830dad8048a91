package dev.kiln.bench.model;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.measure.ProcessMeasurer;
import dev.kiln.autoschedule.progress.TuneProgress;
import dev.kiln.autoschedule.search.RandomSearchPolicy;
import dev.kiln.autoschedule.search.SearchLimits;
import dev.kiln.autoschedule.search.SearchLoop;
import dev.kiln.autoschedule.search.Trial;
import dev.kiln.ir.KilnException;
import dev.kiln.target.CpuTarget;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Measured random programs of a task, kept in a tuning log so that benchmark runs reuse them:
 * {@link #ensure} measures more (random sampling, in a child JVM) until the log holds enough,
 * {@link #load} reads them back as trials.
 */
public final class MeasuredPrograms {
    private MeasuredPrograms() {}

    /**
     * Single-threaded timing, the default warm-up, 3 repeats of at least 2 ms, a 20 s limit per
     * program; no re-measure of the best (these are data sets of random programs, one record each).
     */
    public static final MeasureOptions OPTIONS = MeasureOptions.defaults()
            .withRepeats(3)
            .withMinRepeatMs(2)
            .withTimeoutSeconds(20)
            .withRemeasure(0, 0);

    /** Makes sure the log at {@code file} holds at least {@code n} records of {@code task}. */
    public static void ensure(Path file, SearchTask task, CpuTarget target, int n, long seed) {
        try (TuningLog log = TuningLog.open(file);
                Measurer m = ProcessMeasurer.start(target, OPTIONS)) {
            int have = (int) log.records(task.workloadKey(), task.targetDescription()).stream()
                    .filter(r -> !r.isRemeasure())
                    .count();
            if (have >= n) return;
            System.out.printf(
                    "measuring %d more random programs of %s%n",
                    n - have, task.dag().outputs().getFirst().name());
            new SearchLoop(
                            task,
                            RandomSearchPolicy.cpu(task, seed + have),
                            m,
                            log,
                            new SearchLimits(n, 64, Duration.ZERO, 0),
                            TuneProgress.none())
                    .run();
        }
    }

    /** The task's measured programs in the log. */
    public static List<Trial> load(Path file, SearchTask task) {
        List<Trial> out = new ArrayList<>();
        try (TuningLog log = TuningLog.open(file)) {
            for (LogRecord r : log.records(task.workloadKey(), task.targetDescription())) {
                if (r.isRemeasure()) continue;
                Candidate c;
                try {
                    c = Candidate.of(r.schedule(task));
                } catch (KilnException e) {
                    continue;
                }
                MeasureResult m = r.isValid()
                        ? new MeasureResult(
                                r.costs().stream()
                                        .mapToDouble(Double::doubleValue)
                                        .toArray(),
                                MeasureError.NONE,
                                "",
                                r.compileSeconds(),
                                r.wallSeconds(),
                                r.timestamp().toEpochMilli())
                        : MeasureResult.failed(
                                MeasureError.valueOf(r.errorKind()),
                                r.errorMessage(),
                                r.compileSeconds(),
                                r.wallSeconds());
                out.add(new Trial(c, m));
            }
        }
        return out;
    }
}
