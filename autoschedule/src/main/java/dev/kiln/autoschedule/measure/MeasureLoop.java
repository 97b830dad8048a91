package dev.kiln.autoschedule.measure;

import dev.kiln.ir.KilnException;

/**
 * The measuring loop every measurer runs once a program is compiled and its arguments are in
 * place, written once for every device: the checked run (compared with the reference when
 * {@link MeasureOptions#checkCorrectness()} asks and the device has one), the fixed warm-up runs,
 * the warm-up by time ({@link Warmup}), the calibration of the runs per repeat ({@code number}
 * doubled, or raised to what the last repeat predicts, until a repeat lasts
 * {@link MeasureOptions#minRepeatMs()}), and the timed repeats, each after a cache flush when
 * {@link MeasureOptions#flushCache()} asks (then every repeat is one run, as in TVM). Failures are
 * classified the same way everywhere: an exception in the checked run is {@link MeasureError#RUNTIME}
 * with the exception's message, a differing output {@link MeasureError#WRONG_RESULT}, a first run
 * slower than the time-out {@link MeasureError#TIMEOUT} (where {@link Limits#timeoutOnFirstRun()}),
 * an exception while timing {@link MeasureError#RUNTIME} "while timing: ...". The device part (how
 * to run, synchronise, time, flush and compare) is a {@link Device}: the CPU's runs on
 * {@code NDArray}s ({@link ProgramRunner}, used by {@link LocalMeasurer} and the worker of
 * {@link ProcessMeasurer}), the GPU's on device buffers timed with CUDA events
 * ({@code dev.kiln.cuda.CudaMeasurer}).
 */
public final class MeasureLoop {
    private MeasureLoop() {}

    /** One compiled program on one device, with its arguments bound. */
    public interface Device {
        /** Whether the device holds reference outputs to compare with. */
        boolean hasReferences();

        /** Called before the checked run when the outputs will be compared (to poison them, say). */
        default void prepareCheck() {}

        /** Runs the program once and waits for it to finish; returns how long it took in seconds. */
        double runChecked();

        /** The first output that differs from its reference, described; null when all match. */
        String compareOutputs();

        /** Runs the program once, untimed (a device may queue it without waiting). */
        void launch();

        /** The warm-up by time: untimed runs for at most {@code ms} milliseconds, until their times settle. */
        default void warmUp(double ms) {
            Warmup.run(this::launch, ms);
        }

        /** The mean time of {@code number} back-to-back runs in seconds, all finished when it returns. */
        double time(long number);

        /** Evicts the caches the program's data may sit in, outside any timed region. */
        void flushCache();

        /** Called after the timed repeats (to check an error flag the runs may have raised). */
        default void afterTiming() {}

        /** Called with every exception the loop turns into an error, before it returns (to reset a device). */
        default void failed(RuntimeException e) {}
    }

    /**
     * What differs between devices in the loop itself.
     *
     * @param maxNumber         the most runs one repeat may have, whatever {@code minRepeatMs} asks
     * @param warmupByTime      whether {@link MeasureOptions#warmupMs()} applies ({@link Warmup} times
     *                          {@link Device#launch()} by the host clock, so it needs runs that finish
     *                          before they return)
     * @param timeoutOnFirstRun whether a checked run slower than {@link MeasureOptions#timeoutSeconds()}
     *                          is a {@link MeasureError#TIMEOUT} (where no process enforces the time-out)
     */
    public record Limits(long maxNumber, boolean warmupByTime, boolean timeoutOnFirstRun) {
        public Limits {
            if (maxNumber < 1) throw new KilnException("measure loop: maxNumber must be at least 1, got " + maxNumber);
        }

        /** A CPU: up to 2^30 runs per repeat, warm-up by time; the time-out is the worker process's. */
        public static final Limits CPU = new Limits(1L << 30, true, false);
    }

    /** Times (one per repeat, when {@code error} is NONE) or the error and its reason. */
    public record Outcome(double[] costs, MeasureError error, String message) {
        public Outcome {
            costs = costs.clone();
        }

        @Override
        public double[] costs() {
            return costs.clone();
        }

        public static Outcome failed(MeasureError error, String message) {
            if (error == MeasureError.NONE) throw new KilnException("a failed outcome needs an error other than NONE");
            return new Outcome(new double[0], error, message);
        }

        /** This outcome as a measurement result of a program that took {@code compileSeconds} to compile. */
        public MeasureResult toResult(double compileSeconds) {
            return error == MeasureError.NONE
                    ? MeasureResult.ok(costs, compileSeconds, 0)
                    : MeasureResult.failed(error, message, compileSeconds, 0);
        }
    }

    /** Checks and times the program on {@code device} the way {@code o} says. */
    public static Outcome run(Device device, MeasureOptions o, Limits limits) {
        return run(device, o, limits, Double.POSITIVE_INFINITY);
    }

    /**
     * As {@link #run(Device, MeasureOptions, Limits)}, but a program whose checked run takes longer than
     * {@code slowSeconds} is timed once: no warm-up, one repeat (after a flush where {@code o} asks), since it cannot
     * be the best of its workload ({@link SlowPrograms} sets the bar) and its full warm-up and repeats would cost
     * seconds of the tuning budget each. That one timed run must be over the bar too: a fast program whose checked run
     * alone was slow (a preemption or page faults on a busy machine) is then measured in full.
     */
    public static Outcome run(Device device, MeasureOptions o, Limits limits, double slowSeconds) {
        return run(device, o, limits, slowSeconds, Double.POSITIVE_INFINITY);
    }

    /**
     * As {@link #run(Device, MeasureOptions, Limits, double)}, and, with caches flushed before every timed run, a
     * program whose repeats after a short warm-up ({@link MeasureOptions#FLUSHED_WARMUP_MS}) are all slower than
     * {@code promisingSeconds} keeps those times: it is no contender for its workload's best ({@link SlowPrograms}
     * sets the bar), and the rest of the warm-up, about a third of a network tune's measuring, would only make its
     * number a few percent more exact. A program under the bar warms up in full and is timed again, so every
     * contender is measured as before. Infinite {@code promisingSeconds}: every program is warmed up in full.
     */
    public static Outcome run(
            Device device, MeasureOptions o, Limits limits, double slowSeconds, double promisingSeconds) {
        boolean check = o.checkCorrectness() && device.hasReferences();
        double first;
        try {
            if (check) device.prepareCheck();
            first = device.runChecked();
            if (check) {
                String wrong = device.compareOutputs();
                if (wrong != null) return Outcome.failed(MeasureError.WRONG_RESULT, wrong);
            }
        } catch (RuntimeException | StackOverflowError e) {
            return failure(device, e, "");
        }
        if (limits.timeoutOnFirstRun() && first > o.timeoutSeconds()) {
            return Outcome.failed(
                    MeasureError.TIMEOUT,
                    String.format(
                            java.util.Locale.ROOT,
                            "one run took %.3f s, more than the %.1f s allowed",
                            first,
                            o.timeoutSeconds()));
        }
        if (first > slowSeconds) {
            try {
                if (o.flushCache()) device.flushCache();
                double once = device.time(1);
                if (once > slowSeconds) {
                    device.afterTiming();
                    return new Outcome(new double[] {once}, MeasureError.NONE, "");
                }
                // the checked run was slow by accident (preempted, paged in on a loaded machine): time it in full
            } catch (RuntimeException | StackOverflowError e) {
                return failure(device, e, "while timing: ");
            }
        }
        try {
            for (int i = 0; i < o.warmup(); i++) device.launch();
            boolean staged = limits.warmupByTime()
                    && o.flushCache()
                    && promisingSeconds < Double.POSITIVE_INFINITY
                    && o.warmupMs() > MeasureOptions.FLUSHED_WARMUP_MS;
            if (limits.warmupByTime()) device.warmUp(staged ? MeasureOptions.FLUSHED_WARMUP_MS : o.warmupMs());
            double[] costs = repeats(device, o, limits);
            if (staged && min(costs) <= promisingSeconds) {
                device.warmUp(o.warmupMs());
                costs = repeats(device, o, limits);
            }
            device.afterTiming();
            return new Outcome(costs, MeasureError.NONE, "");
        } catch (RuntimeException | StackOverflowError e) {
            return failure(device, e, "while timing: ");
        }
    }

    /** The timed repeats: each one run after a flush where {@code o} flushes, else calibrated runs. */
    private static double[] repeats(Device device, MeasureOptions o, Limits limits) {
        double[] costs = new double[o.repeats()];
        if (o.flushCache()) {
            // a flush costs far more than a small kernel: with it, every repeat is one run (as in TVM)
            for (int r = 0; r < costs.length; r++) {
                device.flushCache();
                costs[r] = device.time(1);
            }
        } else {
            long number = calibrate(device, o.number(), o.minRepeatMs() / 1e3, limits.maxNumber());
            for (int r = 0; r < costs.length; r++) costs[r] = device.time(number);
        }
        return costs;
    }

    private static double min(double[] xs) {
        double m = Double.POSITIVE_INFINITY;
        for (double x : xs) m = Math.min(m, x);
        return m;
    }

    /** The runs per repeat: {@code number} raised until a repeat lasts {@code minSeconds} (or {@code max}). */
    static long calibrate(Device device, long number, double minSeconds, long max) {
        if (minSeconds <= 0) return number;
        double t = device.time(number);
        while (t * number < minSeconds && number < max) {
            double perRun = Math.max(t, 1e-9);
            long want = (long) Math.ceil(minSeconds / perRun * 1.1);
            number = Math.min(max, Math.max(number * 2, want));
            t = device.time(number);
        }
        return number;
    }

    private static Outcome failure(Device device, Throwable e, String prefix) {
        if (e instanceof RuntimeException r) device.failed(r);
        return Outcome.failed(MeasureError.RUNTIME, prefix + describe(e));
    }

    /** An exception as a measurement's error message: a {@link KilnException}'s message, else its class and message. */
    public static String describe(Throwable e) {
        String m = e.getMessage();
        if (e instanceof KilnException && m != null) return m;
        return e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }
}
