package dev.kiln.autoschedule.measure;

import dev.kiln.ir.KilnException;
import java.util.Arrays;
import java.util.Objects;

/**
 * The outcome of measuring one program: its times, or the error that prevented them.
 *
 * @param costsSeconds    one time per repeat, in seconds: the mean of the runs of that repeat (the raw
 *                        repeats; {@link #cost()} reads the program's cost from them)
 *                        (empty exactly when {@code error} is not {@link MeasureError#NONE})
 * @param error           {@link MeasureError#NONE}, or why there is no time
 * @param errorMessage    the reason, naming what failed (empty when there is no error)
 * @param compileSeconds  time the backend took to compile the program (0 if it never got there)
 * @param wallSeconds     time the whole measurement took as the caller saw it: lowering, the
 *                        transfer to the worker, compiling, checking and timing
 * @param timestampMillis when the measurement finished, in milliseconds since the epoch
 */
public record MeasureResult(
        double[] costsSeconds,
        MeasureError error,
        String errorMessage,
        double compileSeconds,
        double wallSeconds,
        long timestampMillis) {

    /** The cost Ansor gives a failed measurement, so that it ranks below every real time. */
    public static final double FAILED_COST = 1e10;

    public MeasureResult {
        Objects.requireNonNull(error, "error");
        Objects.requireNonNull(errorMessage, "errorMessage");
        costsSeconds = costsSeconds.clone();
        if ((error == MeasureError.NONE) == (costsSeconds.length == 0)) {
            throw new KilnException(
                    error == MeasureError.NONE
                            ? "a successful measurement needs at least one time"
                            : "a failed measurement (" + error + ") has no times, got "
                                    + Arrays.toString(costsSeconds));
        }
        for (double c : costsSeconds) {
            if (!(c >= 0) || Double.isInfinite(c))
                throw new KilnException("measured time " + c + " s is not a finite time");
        }
        if (error == MeasureError.NONE && !errorMessage.isEmpty()) {
            throw new KilnException("a successful measurement has no error message, got '" + errorMessage + "'");
        }
    }

    /** A successful measurement. */
    public static MeasureResult ok(double[] costsSeconds, double compileSeconds, double wallSeconds) {
        return new MeasureResult(
                costsSeconds, MeasureError.NONE, "", compileSeconds, wallSeconds, System.currentTimeMillis());
    }

    /** A failed measurement. */
    public static MeasureResult failed(MeasureError error, String message, double compileSeconds, double wallSeconds) {
        if (error == MeasureError.NONE) throw new KilnException("a failed measurement needs an error other than NONE");
        return new MeasureResult(
                new double[0], error, message, compileSeconds, wallSeconds, System.currentTimeMillis());
    }

    @Override
    public double[] costsSeconds() {
        return costsSeconds.clone();
    }

    /** Whether the program ran and its output matched the reference. */
    public boolean ok() {
        return error == MeasureError.NONE;
    }

    /** The median of the repeats' times in seconds; {@link #FAILED_COST} for a failed measurement. */
    public double median() {
        if (!ok()) return FAILED_COST;
        double[] s = costsSeconds.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    /**
     * The program's cost in seconds: {@link CostStatistic#DEFAULT} of the repeats' times (what a
     * search ranks programs by); {@link #FAILED_COST} for a failed measurement.
     */
    public double cost() {
        return cost(CostStatistic.DEFAULT);
    }

    /** {@code statistic} of the repeats' times in seconds; {@link #FAILED_COST} for a failed measurement. */
    public double cost(CostStatistic statistic) {
        return ok() ? statistic.of(costsSeconds) : FAILED_COST;
    }

    /** The mean of the repeats' times in seconds; {@link #FAILED_COST} for a failed measurement. */
    public double mean() {
        if (!ok()) return FAILED_COST;
        return Arrays.stream(costsSeconds).average().orElseThrow();
    }

    /**
     * Speed in GFLOP/s for a program of {@code flops} floating-point operations (see
     * {@code ComputeDAG.flopCount()}), from the {@link #cost()}; 0 for a failed measurement.
     */
    public double gflops(long flops) {
        if (!ok()) return 0;
        double t = cost();
        return t > 0 ? flops / t / 1e9 : Double.POSITIVE_INFINITY;
    }

    /** The same result with another wall time (set by a measurer once the whole measurement is done). */
    public MeasureResult withWallSeconds(double seconds) {
        return new MeasureResult(costsSeconds, error, errorMessage, compileSeconds, seconds, timestampMillis);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MeasureResult r
                && Arrays.equals(costsSeconds, r.costsSeconds)
                && error == r.error
                && errorMessage.equals(r.errorMessage)
                && Double.compare(compileSeconds, r.compileSeconds) == 0
                && Double.compare(wallSeconds, r.wallSeconds) == 0
                && timestampMillis == r.timestampMillis;
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                Arrays.hashCode(costsSeconds), error, errorMessage, compileSeconds, wallSeconds, timestampMillis);
    }

    @Override
    public String toString() {
        if (!ok()) return "MeasureResult(" + error + ": " + errorMessage + ")";
        return String.format(
                java.util.Locale.ROOT,
                "MeasureResult(cost %.3g s of %s, compile %.3g s)",
                cost(),
                Arrays.toString(costsSeconds),
                compileSeconds);
    }
}
