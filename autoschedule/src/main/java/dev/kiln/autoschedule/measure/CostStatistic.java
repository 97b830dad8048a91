package dev.kiln.autoschedule.measure;

import dev.kiln.ir.KilnException;
import java.util.Arrays;

/**
 * How the times of a measurement's repeats become the one cost a program is ranked by. The raw
 * repeats are always kept ({@link MeasureResult#costsSeconds()}, the log's {@code costs}); this
 * only decides what is read from them.
 */
public enum CostStatistic {
    /** The middle repeat (the mean of the middle two for an even count): Kiln's statistic before issue 13. */
    MEDIAN,
    /** The fastest repeat: timing noise on a shared machine only ever adds time. */
    MIN,
    /** The mean after dropping the fastest and the slowest fifth (at least one each from 3 repeats on). */
    TRIMMED_MEAN,
    /** The plain mean (Ansor's {@code MeasureResult} cost). */
    MEAN;

    /**
     * The statistic Kiln ranks programs by: the search's best, {@link MeasureResult#cost()} and
     * {@code LogRecord.seconds()}. Chosen with {@code ./kiln measure-bench} (docs/PERFORMANCE.md).
     */
    public static final CostStatistic DEFAULT = MIN;

    /** The statistic of {@code seconds} (at least one value). */
    public double of(double[] seconds) {
        if (seconds.length == 0) throw new KilnException("cost statistic " + this + ": no repeat to read");
        double[] s = seconds.clone();
        Arrays.sort(s);
        int n = s.length;
        return switch (this) {
            case MEDIAN -> n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
            case MIN -> s[0];
            case TRIMMED_MEAN -> {
                int cut = n >= 3 ? Math.max(1, n / 5) : 0;
                yield Arrays.stream(s, cut, n - cut).average().orElseThrow();
            }
            case MEAN -> Arrays.stream(s).average().orElseThrow();
        };
    }

    /** The statistic named {@code name} (case-insensitive; {@code trimmed-mean} or {@code trimmed_mean}). */
    public static CostStatistic parse(String name) {
        String n = name.strip().toUpperCase(java.util.Locale.ROOT).replace('-', '_');
        for (CostStatistic c : values()) if (c.name().equals(n)) return c;
        throw new KilnException("cost statistic '" + name + "': expected one of median, min, trimmed-mean, mean");
    }
}
