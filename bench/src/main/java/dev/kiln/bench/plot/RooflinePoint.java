package dev.kiln.bench.plot;

import dev.kiln.ir.KilnException;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;

/**
 * One tuned kernel on a roofline plot.
 *
 * @param name      the kernel ("C2D 1,56,56,64,64,1,1,0")
 * @param intensity arithmetic intensity: operations per byte of compulsory memory traffic
 * @param rate      measured speed, in GFLOP/s (or GOP/s)
 */
public record RooflinePoint(String name, double intensity, double rate) {
    public RooflinePoint {
        if (!(intensity > 0) || !(rate > 0) || Double.isInfinite(intensity) || Double.isInfinite(rate)) {
            throw new KilnException("roofline point " + name + ": intensity " + intensity + " and rate " + rate
                    + " must be positive and finite");
        }
    }

    /** The point of a kernel of {@code dag} that ran in {@code seconds}. */
    public static RooflinePoint of(String name, ComputeDAG dag, double seconds) {
        return new RooflinePoint(name, intensity(dag), dag.flopCount() / seconds / 1e9);
    }

    /**
     * The arithmetic intensity of a computation: its operation count over the bytes every
     * argument (inputs and outputs) occupies, each read or written once (the compulsory traffic,
     * the roofline model's usual lower bound on what a kernel moves).
     */
    public static double intensity(ComputeDAG dag) {
        long bytes = 0;
        for (Tensor t : dag.arguments())
            bytes += t.shape().numElements() * t.dtype().bytes();
        if (bytes == 0) throw new KilnException("roofline: the computation has no argument bytes");
        return (double) dag.flopCount() / bytes;
    }
}
