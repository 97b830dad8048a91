package dev.kiln.bench.plot;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.kiln.autoschedule.log.LogRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Made-up tuning-log records of one workload: seeded random times, every fifth trial failed, and a
 * re-measurement of an earlier program after every seventh trial (which a curve must not count).
 */
public final class SyntheticLog {
    private SyntheticLog() {}

    public static List<LogRecord> records(String workloadKey, String target, int trials, long seed) {
        Random rnd = new Random(seed);
        List<LogRecord> out = new ArrayList<>();
        Instant t = Instant.parse("2026-01-01T00:00:00Z");
        for (int i = 0; i < trials; i++) {
            double wall = 0.2 + rnd.nextDouble();
            t = t.plusMillis((long) (wall * 1000));
            boolean failed = i % 5 == 4;
            double cost = 1e-4 * (0.5 + rnd.nextDouble());
            out.add(LogRecord.builder()
                    .workloadKey(workloadKey)
                    .target(target)
                    .hardware(new int[] {1})
                    .steps(steps(i))
                    .costs(failed ? List.of() : List.of(cost, cost * 1.01))
                    .error(failed ? "COMPILE" : LogRecord.NO_ERROR, failed ? "made up" : "")
                    .compileSeconds(0.1)
                    .wallSeconds(wall)
                    .timestamp(t)
                    .build());
            if (i % 7 == 6 && !failed) {
                out.add(LogRecord.builder()
                        .workloadKey(workloadKey)
                        .target(target)
                        .hardware(new int[] {1})
                        .steps(steps(i))
                        .costs(List.of(cost * 0.9))
                        .compileSeconds(0.1)
                        .wallSeconds(wall)
                        .timestamp(t.plusMillis(1))
                        .build()
                        .asRemeasure());
            }
        }
        return out;
    }

    /** Distinct steps per trial, so each trial is its own program. */
    static ArrayNode steps(int i) {
        ArrayNode a = JsonNodeFactory.instance.arrayNode();
        a.addArray().add("PR").add(i);
        return a;
    }
}
