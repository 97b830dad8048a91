package dev.kiln.autoschedule.measure;

import dev.kiln.ir.KilnException;

/**
 * How programs are timed and checked.
 *
 * <p>Each program is compiled, run once on the inputs and (if {@code checkCorrectness}) compared
 * with the reference output; then it runs {@code warmup} more times untimed, then {@code repeats}
 * timed repeats. A repeat is the mean time of {@code number} runs, where {@code number} is raised
 * (doubled) until a repeat lasts at least {@code minRepeatMs}, as TVM's time evaluator does. The
 * result keeps one time per repeat and reports their median. With {@code flushCache}, a buffer
 * larger than the last-level cache is written before every timed run, outside the timed region,
 * and (as in TVM, since a flush costs far more than a small kernel) every repeat is a single run:
 * {@code number} and {@code minRepeatMs} are ignored.
 *
 * @param repeats           timed repeats (at least 1); the median of these is the program's time
 * @param number            runs per repeat, before the {@code minRepeatMs} rule raises it (at least 1)
 * @param warmup            untimed runs after the checked run (0 or more)
 * @param minRepeatMs       the shortest a repeat may be, in milliseconds (0 disables the rule)
 * @param flushCache        whether to flush the CPU caches before every timed run
 * @param timeoutSeconds    the longest one program may take to compile, check and time in the
 *                          worker process; past it, the worker is killed and the program is a
 *                          {@link MeasureError#TIMEOUT}
 * @param checkCorrectness  whether to compare the output with the interpreter's reference
 * @param rtol              relative tolerance of that comparison
 * @param atol              absolute tolerance of that comparison
 * @param seed              seed of the random inputs ({@code NDArray.fillRandom}; input {@code i} uses
 *                          {@code seed + i})
 */
public record MeasureOptions(int repeats, int number, int warmup, double minRepeatMs, boolean flushCache,
                             double timeoutSeconds, boolean checkCorrectness, double rtol, double atol, long seed) {

    public MeasureOptions {
        if (repeats < 1) throw new KilnException("measure options: repeats must be at least 1, got " + repeats);
        if (number < 1) throw new KilnException("measure options: number must be at least 1, got " + number);
        if (warmup < 0) throw new KilnException("measure options: warmup must not be negative, got " + warmup);
        if (!(minRepeatMs >= 0) || Double.isInfinite(minRepeatMs)) {
            throw new KilnException("measure options: minRepeatMs must be a finite non-negative number, got " + minRepeatMs);
        }
        if (!(timeoutSeconds > 0) || Double.isInfinite(timeoutSeconds)) {
            throw new KilnException("measure options: timeoutSeconds must be positive and finite, got " + timeoutSeconds);
        }
        if (!(rtol >= 0) || !(atol >= 0)) {
            throw new KilnException("measure options: tolerances must be non-negative, got rtol " + rtol + ", atol " + atol);
        }
    }

    /**
     * The defaults: 5 repeats of at least 1 run and 10 ms each after 1 warm-up run, no cache flush,
     * 20 s per program, the output checked with rtol = atol = 1e-3 (room for the reordered
     * additions of a tiled reduction), inputs from seed 42.
     */
    public static MeasureOptions defaults() {
        return new MeasureOptions(5, 1, 1, 10, false, 20, true, 1e-3, 1e-3, 42);
    }

    public MeasureOptions withRepeats(int n) {
        return new MeasureOptions(n, number, warmup, minRepeatMs, flushCache, timeoutSeconds, checkCorrectness, rtol, atol, seed);
    }

    public MeasureOptions withNumber(int n) {
        return new MeasureOptions(repeats, n, warmup, minRepeatMs, flushCache, timeoutSeconds, checkCorrectness, rtol, atol, seed);
    }

    public MeasureOptions withWarmup(int n) {
        return new MeasureOptions(repeats, number, n, minRepeatMs, flushCache, timeoutSeconds, checkCorrectness, rtol, atol, seed);
    }

    public MeasureOptions withMinRepeatMs(double ms) {
        return new MeasureOptions(repeats, number, warmup, ms, flushCache, timeoutSeconds, checkCorrectness, rtol, atol, seed);
    }

    public MeasureOptions withFlushCache(boolean f) {
        return new MeasureOptions(repeats, number, warmup, minRepeatMs, f, timeoutSeconds, checkCorrectness, rtol, atol, seed);
    }

    public MeasureOptions withTimeoutSeconds(double s) {
        return new MeasureOptions(repeats, number, warmup, minRepeatMs, flushCache, s, checkCorrectness, rtol, atol, seed);
    }

    public MeasureOptions withCheckCorrectness(boolean c) {
        return new MeasureOptions(repeats, number, warmup, minRepeatMs, flushCache, timeoutSeconds, c, rtol, atol, seed);
    }

    public MeasureOptions withTolerances(double relative, double absolute) {
        return new MeasureOptions(repeats, number, warmup, minRepeatMs, flushCache, timeoutSeconds, checkCorrectness,
                relative, absolute, seed);
    }

    public MeasureOptions withSeed(long s) {
        return new MeasureOptions(repeats, number, warmup, minRepeatMs, flushCache, timeoutSeconds, checkCorrectness, rtol, atol, s);
    }
}
