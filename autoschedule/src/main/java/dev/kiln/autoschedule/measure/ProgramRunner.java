package dev.kiln.autoschedule.measure;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.WorkerPool;
import java.util.List;

/**
 * The CPU side of {@link MeasureLoop}: makes a program's arguments from the {@link Workload}
 * (inputs copied, outputs poisoned), runs it on them, compares its outputs with the workload's
 * references, and times back-to-back runs with {@link System#nanoTime()} (each after a
 * {@link CacheFlusher} flush when asked). The backend's worker threads are held for the whole measurement
 * ({@link WorkerPool#hold}), as a network holds them for its run: they poll between runs instead of
 * sleeping, so a timed run never includes waking them (60-80 us on a virtual machine, more than many kernels take),
 * whatever a flush or the warm-up leaves between runs. Shared by the worker process and {@link LocalMeasurer},
 * so both time programs the same way.
 */
final class ProgramRunner {
    private ProgramRunner() {}

    /** A compiled program: runs on the arrays of its parameters. */
    @FunctionalInterface
    interface Kernel {
        void run(NDArray[] args);

        /** The byte sizes of the heap temporaries a run takes (evicted with the arguments by a flush). */
        default List<Long> heapTemporaries() {
            return List.of();
        }

        /** A backend's compiled kernel, with its heap temporaries. */
        static Kernel of(CompiledKernel k) {
            return new Kernel() {
                @Override
                public void run(NDArray[] args) {
                    k.call(args);
                }

                @Override
                public List<Long> heapTemporaries() {
                    return k.heapTemporaries();
                }
            };
        }
    }

    static MeasureLoop.Outcome run(
            Kernel kernel,
            List<Buffer> params,
            Workload workload,
            MeasureOptions o,
            CacheFlusher flusher,
            WorkerPool pool) {
        return run(kernel, params, workload, o, flusher, pool, Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY);
    }

    /**
     * As above; a program whose checked run exceeds {@code slowSeconds} is timed once, and one timed slower than
     * {@code promisingSeconds} after a short warm-up keeps that timing ({@link MeasureLoop}).
     */
    static MeasureLoop.Outcome run(
            Kernel kernel,
            List<Buffer> params,
            Workload workload,
            MeasureOptions o,
            CacheFlusher flusher,
            WorkerPool pool,
            double slowSeconds,
            double promisingSeconds) {
        NDArray[] args;
        try {
            args = workload.allocate(params);
        } catch (RuntimeException e) {
            return MeasureLoop.Outcome.failed(
                    MeasureError.RUNTIME, "cannot make the arguments: " + MeasureLoop.describe(e));
        }
        pool.hold();
        try {
            return MeasureLoop.run(
                    new CpuDevice(kernel, args, workload, o, flusher),
                    o,
                    MeasureLoop.Limits.CPU,
                    slowSeconds,
                    promisingSeconds);
        } finally {
            pool.release();
            for (NDArray a : args) a.close();
        }
    }

    private record CpuDevice(Kernel kernel, NDArray[] args, Workload workload, MeasureOptions o, CacheFlusher flusher)
            implements MeasureLoop.Device {
        @Override
        public boolean hasReferences() {
            return workload.hasReferences();
        }

        @Override
        public double runChecked() {
            long t0 = System.nanoTime();
            kernel.run(args);
            return (System.nanoTime() - t0) / 1e9;
        }

        @Override
        public String compareOutputs() {
            return compare(args, workload, o);
        }

        @Override
        public void launch() {
            kernel.run(args);
        }

        @Override
        public double time(long number) {
            long t0 = System.nanoTime();
            for (long i = 0; i < number; i++) kernel.run(args);
            return (System.nanoTime() - t0) / 1e9 / number;
        }

        @Override
        public void flushCache() {
            if (flusher == null)
                throw new KilnException("measure options ask for a cache flush, but no flusher was given");
            flusher.flush(args, kernel.heapTemporaries());
        }
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
                c = args[i].compareTo(
                        expected, specs.get(i).rtol(o.rtol()), specs.get(i).atol(o.atol()));
            } catch (KilnException e) {
                return "output '" + specs.get(i).name() + "': " + e.getMessage();
            }
            if (!c.ok())
                return "output '" + specs.get(i).name()
                        + "' differs from the reference (the interpreter, float32 sums in float64): " + c.report();
        }
        return null;
    }
}
