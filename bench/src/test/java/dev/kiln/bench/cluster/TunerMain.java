package dev.kiln.bench.cluster;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A tuner in its own JVM, for {@link ClusterTuneTest}: args SEED_ADDRESS KEYSTORE LOG TRIALS MIN_REPEAT_MS. It prints
 * {@value #BATCH} and the batch's number (from 1) before it measures each batch.
 */
public final class TunerMain {
    static final String BATCH = "measuring batch ";

    public static void main(String[] args) {
        ClusterSettings s = ClusterSettings.of(
                        "127.0.0.1", 0, List.of(args[0]), Path.of(args[1]), ClusterFixture.PASSWORD)
                .withUnreachableAfter(ClusterFixture.UNREACHABLE);
        MeasureOptions options = ClusterTuneTest.OPTIONS.withMinRepeatMs(Integer.parseInt(args[4]));
        System.out.println("tuner starting");
        AutoSchedule.tune(
                        ClusterTuneTest.DAG,
                        Target.cpu(),
                        ClusterTuneTest.tuneOptions(Path.of(args[2]), Integer.parseInt(args[3]))
                                .measureOptions(options)
                                .measurers(
                                        (target, o) -> new Announcing(ClusterMeasurer.factory(s, Duration.ofSeconds(60))
                                                .create(target, o)))
                                .build())
                .close();
        System.out.println("tuner done");
        System.exit(0);
    }

    /** Prints each batch's number before measuring it. */
    private static final class Announcing implements Measurer {
        private final Measurer inner;
        private int batches;

        Announcing(Measurer inner) {
            this.inner = inner;
        }

        @Override
        public Target target() {
            return inner.target();
        }

        @Override
        public MeasureOptions options() {
            return inner.options();
        }

        @Override
        public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
            System.out.println(BATCH + ++batches);
            System.out.flush();
            return inner.measure(task, schedules);
        }

        @Override
        public void close() {
            inner.close();
        }
    }
}
