package dev.kiln.bench.cluster;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** A tuner in its own JVM, for {@link ClusterTuneTest}: args SEED_ADDRESS KEYSTORE LOG TRIALS. */
public final class TunerMain {
    public static void main(String[] args) {
        ClusterSettings s = ClusterSettings.of(
                        "127.0.0.1", 0, List.of(args[0]), Path.of(args[1]), ClusterFixture.PASSWORD)
                .withUnreachableAfter(ClusterFixture.UNREACHABLE);
        System.out.println("tuner starting");
        AutoSchedule.tune(
                        ClusterTuneTest.DAG,
                        Target.cpu(),
                        ClusterTuneTest.tuneOptions(Path.of(args[2]), Integer.parseInt(args[3]))
                                .measurers(ClusterMeasurer.factory(s, Duration.ofSeconds(60)))
                                .build())
                .close();
        System.out.println("tuner done");
        System.exit(0);
    }
}
