package dev.kiln.autoschedule.measure;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import java.util.List;

/**
 * Runs one compiled program the way {@link MeasureOptions} says and reports its times or its
 * error: the checked run against the reference, warm-up runs and the warm-up by time
 * ({@link Warmup}), the calibration of the runs per
 * repeat, the timed repeats (each optionally after a cache flush). Shared by the worker process
 * and {@link LocalMeasurer}, so both time programs the same way.
 */
final class ProgramRunner {
    private ProgramRunner() {}

    /** A compiled program: runs on the arrays of its parameters. */
    @FunctionalInterface
    interface Kernel {
        void run(NDArray[] args);
    }

    /** Times (one per repeat, when {@code error} is NONE) or the error and its reason. */
    record Outcome(double[] costs, MeasureError error, String message) {
        static Outcome failed(MeasureError error, String message) {
            return new Outcome(new double[0], error, message);
        }
    }

    /** The most runs one repeat may have, whatever {@code minRepeatMs} asks. */
    static final long MAX_NUMBER = 1L << 30;

    static Outcome run(Kernel kernel, List<Buffer> params, Workload workload, MeasureOptions o, CacheFlusher flusher) {
        NDArray[] args;
        try {
            args = workload.allocate(params);
        } catch (RuntimeException e) {
            return Outcome.failed(MeasureError.RUNTIME, "cannot make the arguments: " + describe(e));
        }
        try {
            try {
                kernel.run(args);
            } catch (RuntimeException | StackOverflowError e) {
                return Outcome.failed(MeasureError.RUNTIME, describe(e));
            }
            if (o.checkCorrectness() && workload.hasReferences()) {
                String wrong = compare(args, workload, o);
                if (wrong != null) return Outcome.failed(MeasureError.WRONG_RESULT, wrong);
            }
            for (int i = 0; i < o.warmup(); i++) kernel.run(args);
            Warmup.run(() -> kernel.run(args), o.warmupMs());
            // a flush costs far more than a small kernel: with it, every repeat is one run (as in TVM)
            long number = o.flushCache() ? 1 : o.number();
            double minSeconds = o.flushCache() ? 0 : o.minRepeatMs() / 1e3;
            if (minSeconds > 0) {
                double t = repeat(kernel, args, number, o.flushCache() ? flusher : null);
                while (t * number < minSeconds && number < MAX_NUMBER) {
                    double perRun = Math.max(t, 1e-9);
                    long want = (long) Math.ceil(minSeconds / perRun * 1.1);
                    number = Math.min(MAX_NUMBER, Math.max(number * 2, want));
                    t = repeat(kernel, args, number, o.flushCache() ? flusher : null);
                }
            }
            double[] costs = new double[o.repeats()];
            for (int r = 0; r < costs.length; r++) costs[r] = repeat(kernel, args, number, o.flushCache() ? flusher : null);
            return new Outcome(costs, MeasureError.NONE, "");
        } catch (RuntimeException | StackOverflowError e) {
            return Outcome.failed(MeasureError.RUNTIME, "while timing: " + describe(e));
        } finally {
            for (NDArray a : args) a.close();
        }
    }

    /** The mean time of {@code number} runs in seconds, each after a flush when {@code flusher} is given. */
    private static double repeat(Kernel kernel, NDArray[] args, long number, CacheFlusher flusher) {
        if (flusher == null) {
            long t0 = System.nanoTime();
            for (long i = 0; i < number; i++) kernel.run(args);
            return (System.nanoTime() - t0) / 1e9 / number;
        }
        long total = 0;
        for (long i = 0; i < number; i++) {
            flusher.flush();
            long t0 = System.nanoTime();
            kernel.run(args);
            total += System.nanoTime() - t0;
        }
        return total / 1e9 / number;
    }

    /** The first output that differs from its reference, described; null if all match. */
    private static String compare(NDArray[] args, Workload w, MeasureOptions o) {
        List<ArgumentSpec> specs = w.args();
        int ref = 0;
        for (int i = 0; i < specs.size(); i++) {
            if (specs.get(i).input()) continue;
            NDArray expected = w.references().get(ref++);
            Comparison c;
            try {
                c = args[i].compareTo(expected, o.rtol(), o.atol());
            } catch (KilnException e) {
                return "output '" + specs.get(i).name() + "': " + e.getMessage();
            }
            if (!c.ok()) return "output '" + specs.get(i).name() + "' differs from the interpreter's: " + c.report();
        }
        return null;
    }

    static String describe(Throwable e) {
        String m = e.getMessage();
        if (e instanceof KilnException && m != null) return m;
        return e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }
}
