package dev.kiln.operators;

import dev.kiln.ir.DType;
import dev.kiln.runtime.NDArray;
import java.util.function.Consumer;

/**
 * A plain-Java row-major n-d array of doubles for the reference implementations of operator
 * tests: nested loops read and write it by index, then it becomes the expected NDArray.
 */
final class NdRef {
    final long[] shape;
    final double[] data;

    private NdRef(long[] shape, double[] data) {
        this.shape = shape.clone();
        this.data = data;
    }

    static NdRef of(NDArray a) {
        return new NdRef(a.shape(), a.toDoubleArray());
    }

    static NdRef zeros(long... shape) {
        long n = 1;
        for (long d : shape) n *= d;
        return new NdRef(shape, new double[Math.toIntExact(n)]);
    }

    int dim(int d) {
        return (int) shape[d];
    }

    int offset(int... idx) {
        if (idx.length != shape.length)
            throw new IllegalArgumentException("rank " + shape.length + " indexed with " + idx.length);
        int off = 0;
        for (int d = 0; d < idx.length; d++) {
            if (idx[d] < 0 || idx[d] >= shape[d])
                throw new IndexOutOfBoundsException("index " + idx[d] + " at axis " + d);
            off = off * (int) shape[d] + idx[d];
        }
        return off;
    }

    double get(int... idx) {
        return data[offset(idx)];
    }

    void set(double v, int... idx) {
        data[offset(idx)] = v;
    }

    /** The expected array in {@code dtype}: floats rounded to it, integers exact. */
    NDArray toNd(DType dtype) {
        if (dtype.isFloat()) return NDArray.fromDoubles(dtype, data, shape);
        long[] l = new long[data.length];
        for (int i = 0; i < l.length; i++) l[i] = Math.round(data[i]);
        return NDArray.fromLongs(dtype, l, shape);
    }

    /** Calls {@code body} with every index of {@code shape} in row-major order (once for rank 0). */
    static void forEach(long[] shape, Consumer<int[]> body) {
        int[] idx = new int[shape.length];
        long n = 1;
        for (long d : shape) n *= d;
        for (long i = 0; i < n; i++) {
            long rest = i;
            for (int d = shape.length - 1; d >= 0; d--) {
                idx[d] = (int) (rest % shape[d]);
                rest /= shape[d];
            }
            body.accept(idx.clone());
        }
    }

    /** Rewrites every element of a float array with {@code f} (to move random inputs into a wanted range). */
    static void map(NDArray a, java.util.function.DoubleUnaryOperator f) {
        for (long i = 0; i < a.numElements(); i++) a.setDoubleFlat(f.applyAsDouble(a.getDoubleFlat(i)), i);
    }
}
