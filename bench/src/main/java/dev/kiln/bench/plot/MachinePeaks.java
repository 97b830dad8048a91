package dev.kiln.bench.plot;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The two roofs of a roofline plot, measured on this machine.
 *
 * <ul>
 *   <li>Compute peak: a float32 FMA loop compiled by the JVM's JIT (the Vector API at the preferred
 *       width, eight independent accumulators to hide the FMA latency) on {@code threads} threads
 *       at once; the best of a few timed runs.
 *   <li>Memory bandwidth: a STREAM-style triad {@code a[i] = b[i] + 3 c[i]} compiled by Kiln
 *       through LLVM (parallel over the target's cores, vectorized), on arrays much larger than the
 *       caches; bytes counted as STREAM does (three arrays, no write-allocate); the best of a few runs.
 * </ul>
 *
 * @param gflops       float32 compute peak, GFLOP/s
 * @param gbPerSecond  memory bandwidth, GB/s
 * @param how          how they were obtained, for the figure's subtitle
 */
public record MachinePeaks(double gflops, double gbPerSecond, String how) {
    public MachinePeaks {
        if (!(gflops > 0) || !(gbPerSecond > 0)) {
            throw new KilnException("machine peaks must be positive: " + gflops + " GFLOP/s, " + gbPerSecond + " GB/s");
        }
    }

    /** Peaks given by the user (no measurement). */
    public static MachinePeaks given(double gflops, double gbPerSecond) {
        return new MachinePeaks(gflops, gbPerSecond, "peaks given on the command line");
    }

    /** Measures both on {@code target} (its cores are the threads) with arrays of {@code streamFloats} floats. */
    public static MachinePeaks measure(CpuTarget target, long streamFloats, double seconds) {
        double peak = fmaPeak(target.cores(), seconds);
        double bw = streamBandwidth(target, streamFloats);
        return new MachinePeaks(
                peak,
                bw,
                String.format(
                        Locale.ROOT,
                        "measured: JVM FMA loop %d-bit x %d thread(s), Kiln triad on 3 x %d MB",
                        FloatVector.SPECIES_PREFERRED.vectorBitSize(),
                        target.cores(),
                        streamFloats * 4 / 1_000_000));
    }

    /** The ridge point: the intensity where the bandwidth roof meets the compute roof. */
    public double ridge() {
        return gflops / gbPerSecond;
    }

    /** The roofline's height at intensity {@code ai}: min(peak, ai x bandwidth). */
    public double roof(double ai) {
        return Math.min(gflops, ai * gbPerSecond);
    }

    /** GFLOP/s of the FMA loop on {@code threads} threads: the best of three runs of about {@code seconds}. */
    static double fmaPeak(int threads, double seconds) {
        if (threads < 1) throw new KilnException("fma peak: threads must be at least 1, got " + threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            fmaRun(pool, threads, 20_000); // lets the JIT compile the loop
            long iters = 100_000;
            double rate = fmaRun(pool, threads, iters);
            while (iters * 8.0 * 2 * FloatVector.SPECIES_PREFERRED.length() * threads / (rate * 1e9) < seconds / 3
                    && iters < Long.MAX_VALUE / 4) {
                iters *= 2;
                rate = Math.max(rate, fmaRun(pool, threads, iters));
            }
            double best = 0;
            for (int i = 0; i < 3; i++) best = Math.max(best, fmaRun(pool, threads, iters));
            return best;
        } finally {
            pool.shutdownNow();
        }
    }

    private static double fmaRun(ExecutorService pool, int threads, long iters) {
        List<Callable<Float>> work = new ArrayList<>();
        for (int t = 0; t < threads; t++) work.add(() -> fmaLoop(iters));
        long t0 = System.nanoTime();
        try {
            float sink = 0;
            for (Future<Float> f : pool.invokeAll(work)) sink += f.get();
            double s = (System.nanoTime() - t0) / 1e9;
            if (Float.isNaN(sink)) throw new KilnException("fma peak: the loop's result is NaN");
            return iters * 8.0 * 2 * FloatVector.SPECIES_PREFERRED.length() * threads / s / 1e9;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KilnException("fma peak: interrupted");
        } catch (java.util.concurrent.ExecutionException e) {
            throw new KilnException("fma peak: " + e.getCause());
        }
    }

    /** Eight independent FMA chains at the preferred vector width; returns a value that depends on all. */
    static float fmaLoop(long iters) {
        VectorSpecies<Float> sp = FloatVector.SPECIES_PREFERRED;
        FloatVector a = FloatVector.broadcast(sp, 0.999999f), b = FloatVector.broadcast(sp, 1e-7f);
        FloatVector c0 = FloatVector.broadcast(sp, 1f), c1 = c0.add(1f), c2 = c0.add(2f), c3 = c0.add(3f);
        FloatVector c4 = c0.add(4f), c5 = c0.add(5f), c6 = c0.add(6f), c7 = c0.add(7f);
        for (long i = 0; i < iters; i++) {
            c0 = c0.fma(a, b);
            c1 = c1.fma(a, b);
            c2 = c2.fma(a, b);
            c3 = c3.fma(a, b);
            c4 = c4.fma(a, b);
            c5 = c5.fma(a, b);
            c6 = c6.fma(a, b);
            c7 = c7.fma(a, b);
        }
        return c0.add(c1)
                .add(c2)
                .add(c3)
                .add(c4)
                .add(c5)
                .add(c6)
                .add(c7)
                .reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
    }

    /** GB/s of the Kiln triad on arrays of {@code n} floats: the best of five calls after one untimed call. */
    static double streamBandwidth(CpuTarget target, long n) {
        if (n < 1024) throw new KilnException("stream bandwidth: arrays need at least 1024 floats, got " + n);
        Tensor b = Te.placeholder("b", DType.FLOAT32, n);
        Tensor c = Te.placeholder("c", DType.FLOAT32, n);
        Tensor a = Te.compute(
                "a", dev.kiln.te.Shape.of(n), i -> b.at(i).add(c.at(i).mul(Te.constant(DType.FLOAT32, 3))));
        ComputeDAG dag = ComputeDAG.of(a);
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var st = s.stage("a");
        int lanes = Math.max(1, target.lanes(4));
        var loops = st.split("i", 64 * lanes, lanes); // i.0 (parallel), i.1, i.2 (vector)
        st.parallel(loops.get(0));
        st.vectorize(loops.get(2));
        try (CompiledKernel k = AutoSchedule.compile(s.build(), target, "kiln_stream_triad");
                NDArray bb = NDArray.random(DType.FLOAT32, 1, n);
                NDArray cc = NDArray.random(DType.FLOAT32, 2, n);
                NDArray aa = NDArray.allocate(DType.FLOAT32, n)) {
            k.call(bb, cc, aa);
            for (long i = 0; i < n; i += Math.max(1, n / 997)) { // the kernel must compute the triad
                double want = bb.getDoubleFlat(i) + 3 * cc.getDoubleFlat(i);
                if (Math.abs(aa.getDoubleFlat(i) - want) > 1e-5 * (1 + Math.abs(want))) {
                    throw new KilnException("stream bandwidth: the triad kernel computed a[" + i + "] = "
                            + aa.getDoubleFlat(i) + ", want " + want);
                }
            }
            double best = Double.POSITIVE_INFINITY;
            for (int r = 0; r < 5; r++) {
                long t0 = System.nanoTime();
                k.call(bb, cc, aa);
                best = Math.min(best, (System.nanoTime() - t0) / 1e9);
            }
            return 3.0 * 4 * n / best / 1e9;
        }
    }
}
