package dev.kiln.autoschedule.search;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fast measurer for tests of the search: each program's time is a deterministic function of its
 * steps (between 0.1 and 1 ms), one program in {@code errorEvery} (by the same hash) fails to
 * "compile", and every measurement advances a fake clock by {@code nanosPerProgram}. Timestamps
 * and wall times are real, so that tests see they differ between runs. It remembers what it
 * measured. Its options turn the re-measure of the best programs off ({@link #withOptions} turns it on).
 */
public class FakeMeasurer implements Measurer {
    private final Target target;
    private final int errorEvery;
    private final AtomicLong clock;
    private final long nanosPerProgram;
    private final List<String> measured = new ArrayList<>();
    private MeasureOptions options = MeasureOptions.defaults().withRemeasure(0, 0);

    public FakeMeasurer(Target target, int errorEvery, AtomicLong clock, long nanosPerProgram) {
        this.target = target;
        this.errorEvery = errorEvery;
        this.clock = clock;
        this.nanosPerProgram = nanosPerProgram;
    }

    /** No errors, no clock. */
    public FakeMeasurer(Target target) {
        this(target, 0, new AtomicLong(), 0);
    }

    static int hash(Schedule s) {
        int h = s.stepsJson().toString().hashCode();
        h ^= h >>> 16;
        h *= 0x45d9f3b;
        h ^= h >>> 16;
        return h & 0x7fffffff;
    }

    /** The synthetic time of a schedule. */
    public static double secondsOf(Schedule s) {
        return 1e-4 * (1 + 9 * (hash(s) % 10007) / 10007.0);
    }

    /** Whether the fake fails this schedule. */
    public boolean fails(Schedule s) {
        return errorEvery > 0 && (hash(s) / 10007) % errorEvery == 0;
    }

    @Override
    public Target target() {
        return target;
    }

    @Override
    public MeasureOptions options() {
        return options;
    }

    /** This fake with other options (its times have no noise, so by default it re-measures nothing). */
    public FakeMeasurer withOptions(MeasureOptions o) {
        this.options = o;
        return this;
    }

    @Override
    public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
        List<MeasureResult> out = new ArrayList<>();
        for (Schedule s : schedules) {
            long t0 = System.nanoTime();
            measured.add(s.stepsJson().toString());
            clock.addAndGet(nanosPerProgram);
            double wall = (System.nanoTime() - t0) / 1e9 + 1e-6;
            if (fails(s)) {
                out.add(MeasureResult.failed(
                        MeasureError.COMPILE, "fake compile error of program " + hash(s), 0.01, wall));
            } else {
                double t = secondsOf(s);
                out.add(MeasureResult.ok(new double[] {t * 1.01, t, t}, 0.01, wall));
            }
        }
        return out;
    }

    /** The steps (as JSON text) of every program measured, in order. */
    public List<String> measured() {
        return List.copyOf(measured);
    }

    @Override
    public void close() {}
}
