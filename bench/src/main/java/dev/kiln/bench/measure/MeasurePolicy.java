package dev.kiln.bench.measure;

import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.ir.KilnException;
import java.util.Arrays;
import java.util.List;

/**
 * A named way of timing programs that {@code ./kiln measure-bench} compares. Re-measuring is a
 * search's business, not a single measurement's, so every policy here has it off.
 *
 * @param name     the name on the command line and in the table
 * @param options  how each program is timed
 */
public record MeasurePolicy(String name, MeasureOptions options) {
    /** The names {@link #of} accepts. */
    public static final List<String> NAMES =
            List.of("legacy", "warmup", "default", "flush", "flush-short", "flush-none", "long");

    /**
     * {@code legacy}: the tuner's timing before issue 13 (1 warm-up run, 5 repeats of at least
     * 10 ms); {@code warmup}: legacy with the warm-up by time (at most 100 ms); {@code default}:
     * {@link MeasureOptions#defaults()} (the warm-up by time, then 10 repeats of one run each);
     * {@code flush}: the default with a cache flush before every run (the network tuner's timing before the fortieth
     * session); {@code flush-short}: flush with the warm-up by time cut to {@link MeasureOptions#FLUSHED_WARMUP_MS}
     * (the network tuner's now); {@code flush-none}: flush with no warm-up by time (the one warm-up run only);
     * {@code long}: the default with 20 repeats.
     */
    public static MeasurePolicy of(String name, double timeoutSeconds) {
        MeasureOptions d = MeasureOptions.defaults().withRemeasure(0, 0).withTimeoutSeconds(timeoutSeconds);
        MeasureOptions legacy = MeasureOptions.legacy().withTimeoutSeconds(timeoutSeconds);
        MeasureOptions o =
                switch (name) {
                    case "legacy" -> legacy;
                    case "warmup" -> legacy.withWarmupMs(d.warmupMs());
                    case "default" -> d;
                    case "flush" -> d.withFlushCache(true);
                    case "flush-short" -> d.withFlushCache(true).withWarmupMs(MeasureOptions.FLUSHED_WARMUP_MS);
                    case "flush-none" -> d.withFlushCache(true).withWarmupMs(0);
                    case "long" -> d.withRepeats(20);
                    default -> throw new KilnException("measure policy '" + name + "': expected one of " + NAMES);
                };
        return new MeasurePolicy(name, o);
    }

    /** Several policies, comma-separated. */
    public static List<MeasurePolicy> list(String names, double timeoutSeconds) {
        return Arrays.stream(names.split(","))
                .map(String::strip)
                .map(n -> of(n, timeoutSeconds))
                .toList();
    }

    /** The options in a few words, for the report. */
    public String describe() {
        return String.format(
                java.util.Locale.ROOT,
                "%s: %d warm-up run(s), warm-up by time <= %.0f ms, %d repeats of >= %d run(s) and %.0f ms%s",
                name,
                options.warmup(),
                options.warmupMs(),
                options.repeats(),
                options.number(),
                options.minRepeatMs(),
                options.flushCache() ? ", cache flushed before every run (1 run per repeat)" : "");
    }
}
