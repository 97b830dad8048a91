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
import java.util.Locale;

/**
 * The two roofs of a roofline plot, measured on this machine.
 *
 * <ul>
 *   <li>Compute peak: a float32 FMA loop of 12 independent accumulator chains at the machine's
 *       widest vector width, written as LLVM IR and compiled by Kiln's JIT ({@link PeakProbe}), on
 *       the target's cores at once; the best of a few timed runs. (A Vector API loop compiled by
 *       the JVM read about a quarter of the real peak here, so the roof is measured natively.)
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
        double peak = fmaPeak(target, seconds);
        double bw = streamBandwidth(target, streamFloats);
        PeakProbe probe = fmaProbe(target);
        return new MachinePeaks(
                peak,
                bw,
                String.format(
                        Locale.ROOT,
                        "measured: %d-chain %s loop (LLVM) x %d thread(s), Kiln triad on 3 x %d MB",
                        PeakProbe.CHAINS,
                        probe.label,
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

    /**
     * GFLOP/s of the f32 FMA peak probe ({@link PeakProbe#FMA}: 12 independent 512-bit {@code vfmadd}
     * chains compiled by Kiln's LLVM JIT, or {@link PeakProbe#FMA256} where the machine has no AVX-512)
     * on the target's cores at once: its loop trip count grows until one run takes about a third of
     * {@code seconds}, then the best of three runs.
     */
    static double fmaPeak(CpuTarget target, double seconds) {
        PeakProbe probe = fmaProbe(target);
        long iters = 100_000;
        double rate = probe.measure(target, target.cores(), iters, 1).opsPerSecond();
        while (iters * (double) PeakProbe.CHAINS * probe.opsPerInstruction * target.cores() / rate < seconds / 3
                && iters < Long.MAX_VALUE / 4) {
            iters *= 2;
            rate = probe.measure(target, target.cores(), iters, 1).opsPerSecond();
        }
        return probe.measure(target, target.cores(), iters, 3).opsPerSecond() / 1e9;
    }

    /** The widest f32 FMA probe {@code target} can run; a machine with neither is said plainly. */
    static PeakProbe fmaProbe(CpuTarget target) {
        if (PeakProbe.FMA.unavailableReason(target) == null) return PeakProbe.FMA;
        if (PeakProbe.FMA256.unavailableReason(target) == null) return PeakProbe.FMA256;
        throw new KilnException("machine peaks: this CPU (" + target.cpu() + ") has neither avx512f nor fma, so no "
                + "FMA peak can be measured; give it with --peak-gflops");
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
