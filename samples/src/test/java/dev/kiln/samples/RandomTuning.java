package dev.kiln.samples;

import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.autoschedule.search.RandomSearchPolicy;
import java.nio.file.Path;

/** The network tests' tuning: random sampling per task (no cost model to train), measured by {@code measurer}. */
final class RandomTuning {
    private RandomTuning() {}

    /** {@code trials} in all, {@code perRound} per task and round, logged to {@code log}. */
    static NetworkTuneOptions options(int trials, int perRound, long seed, Path log, Measurer measurer) {
        return NetworkTuneOptions.builder()
                .trials(trials)
                .measuresPerRound(perRound)
                .seed(seed)
                .logFile(log)
                .measurer(measurer)
                .policies(RandomSearchPolicy::forTask)
                .build();
    }
}
