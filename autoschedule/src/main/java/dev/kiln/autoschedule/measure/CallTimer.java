package dev.kiln.autoschedule.measure;

import dev.kiln.ir.KilnException;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * Times a call the way a user runs it: back to back, after a warm-up by time ({@link Warmup}),
 * each call timed on its own, until there are at least {@code minCalls} calls and
 * {@code minSeconds} of them (or {@code maxCalls}, or {@code maxSeconds}). The result keeps every
 * call's time, so a report gives the median with its spread (p10-p90, min, max), not one figure.
 * Used by the operator table ({@code ./kiln run-ops}), the network executor's profile and
 * benchmarks.
 */
public final class CallTimer {
    private CallTimer() {}

    /**
     * How long to time.
     *
     * @param warmupMs    the longest warm-up by time, in milliseconds ({@link Warmup}; 0: none)
     * @param minCalls    timed calls at least (at least 1)
     * @param minSeconds  seconds of timed calls at least (0 or more)
     * @param maxCalls    timed calls at most (at least {@code minCalls})
     * @param maxSeconds  seconds of timed calls after which it stops whatever {@code minCalls} says (positive)
     */
    public record Policy(double warmupMs, int minCalls, double minSeconds, int maxCalls, double maxSeconds) {
        public Policy {
            if (!(warmupMs >= 0) || Double.isInfinite(warmupMs)) {
                throw new KilnException("call timer: warmupMs must be a finite non-negative number, got " + warmupMs);
            }
            if (minCalls < 1) throw new KilnException("call timer: minCalls must be at least 1, got " + minCalls);
            if (!(minSeconds >= 0) || Double.isInfinite(minSeconds)) {
                throw new KilnException(
                        "call timer: minSeconds must be a finite non-negative number, got " + minSeconds);
            }
            if (maxCalls < minCalls) {
                throw new KilnException(
                        "call timer: maxCalls (" + maxCalls + ") must be at least minCalls (" + minCalls + ")");
            }
            if (!(maxSeconds > 0))
                throw new KilnException("call timer: maxSeconds must be positive, got " + maxSeconds);
        }

        /**
         * A kernel as a user calls it: at most 200 ms of warm-up, then at least 20 calls and 1 s
         * (at most 100,000 calls or 10 s).
         */
        public static Policy kernel() {
            return new Policy(200, 20, 1.0, 100_000, 10);
        }

        /** A slow call (a plain-Java reference loop): no warm-up by time, 3 calls, at most 30 s. */
        public static Policy slow() {
            return new Policy(0, 3, 0, 3, 30);
        }
    }

    /**
     * Every timed call, in seconds, sorted.
     *
     * @param seconds  the calls' times, fastest first
     * @param warmup   what the warm-up did
     */
    public record Stats(double[] seconds, Warmup.Outcome warmup) {
        public Stats {
            if (seconds.length == 0) throw new KilnException("call timer: no timed call");
            seconds = seconds.clone();
            Arrays.sort(seconds);
        }

        @Override
        public double[] seconds() {
            return seconds.clone();
        }

        /** Timed calls. */
        public int calls() {
            return seconds.length;
        }

        public double median() {
            int n = seconds.length;
            return n % 2 == 1 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
        }

        public double min() {
            return seconds[0];
        }

        public double max() {
            return seconds[seconds.length - 1];
        }

        /** The {@code q}-quantile by nearest rank (q in [0, 1]). */
        public double quantile(double q) {
            if (!(q >= 0 && q <= 1)) throw new KilnException("quantile " + q + " is not in [0, 1]");
            int i = (int) Math.ceil(q * seconds.length) - 1;
            return seconds[Math.max(0, Math.min(seconds.length - 1, i))];
        }

        public double p10() {
            return quantile(0.1);
        }

        public double p90() {
            return quantile(0.9);
        }

        /** "1.234 ms (p10-p90 1.200-1.310, 812 calls)". */
        public String describe() {
            return String.format(
                    Locale.ROOT,
                    "%.3f ms (p10-p90 %.3f-%.3f, %d calls)",
                    median() * 1e3,
                    p10() * 1e3,
                    p90() * 1e3,
                    calls());
        }
    }

    /** Times {@code call} by {@link System#nanoTime()}. */
    public static Stats time(Runnable call, Policy p) {
        return time(call, p, System::nanoTime);
    }

    /** Times {@code call} by {@code clock} (nanoseconds; a fake clock in tests). */
    public static Stats time(Runnable call, Policy p, LongSupplier clock) {
        Warmup.Outcome w = Warmup.run(call, p.warmupMs(), clock);
        double[] t = new double[Math.min(p.maxCalls(), 1024)];
        int n = 0;
        long start = clock.getAsLong(), minNs = (long) (p.minSeconds() * 1e9), maxNs = (long) (p.maxSeconds() * 1e9);
        while (true) {
            long s = clock.getAsLong();
            call.run();
            long e = clock.getAsLong();
            if (n == t.length) t = Arrays.copyOf(t, Math.min(p.maxCalls(), 2 * t.length));
            t[n++] = (e - s) / 1e9;
            long spent = e - start;
            if (n >= p.maxCalls() || spent >= maxNs) break;
            if (n >= p.minCalls() && spent >= minNs) break;
        }
        return new Stats(Arrays.copyOf(t, n), w);
    }
}
