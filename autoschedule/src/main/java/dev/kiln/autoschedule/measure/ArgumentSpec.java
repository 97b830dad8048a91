package dev.kiln.autoschedule.measure;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import java.util.Arrays;
import java.util.Objects;

/**
 * One argument of a measured program: its name, dtype and shape, and whether it is an input
 * (filled with seeded random values) or an output (compared with the reference).
 */
record ArgumentSpec(String name, DType dtype, long[] shape, boolean input) {
    ArgumentSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(dtype, "dtype");
        shape = shape.clone();
    }

    static ArgumentSpec of(Buffer b, boolean input) {
        return new ArgumentSpec(b.name(), b.dtype(), b.constShape(), input);
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    /** Throws a {@link KilnException} if {@code param} is not this argument's dtype and shape. */
    void check(Buffer param, int index) {
        long[] sh = param.constShape();
        if (param.dtype() != dtype || !Arrays.equals(sh, shape)) {
            throw new KilnException("parameter " + index + " '" + param.name() + "' of the measured program is "
                    + param.dtype() + Arrays.toString(sh) + ", but the task's argument '" + name + "' is " + dtype
                    + Arrays.toString(shape));
        }
    }

    /**
     * Throws a {@link KilnException} if {@code param} is not this argument's dtype in the packed shape
     * {@code packedShape}.
     */
    void checkPacked(Buffer param, int index, long[] packedShape) {
        long[] sh = param.constShape();
        if (param.dtype() != dtype || !Arrays.equals(sh, packedShape)) {
            throw new KilnException("parameter " + index + " '" + param.name() + "' of the measured program is "
                    + param.dtype() + Arrays.toString(sh) + ", but the task's argument '" + name + "' packed is "
                    + dtype
                    + Arrays.toString(packedShape) + " (from " + Arrays.toString(shape) + ")");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ArgumentSpec a
                && name.equals(a.name)
                && dtype == a.dtype
                && Arrays.equals(shape, a.shape)
                && input == a.input;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, dtype, Arrays.hashCode(shape), input);
    }

    @Override
    public String toString() {
        return (input ? "input " : "output ") + name + ": " + dtype + Arrays.toString(shape);
    }
}
