package dev.kiln.autoschedule.measure;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import java.util.Arrays;
import java.util.Objects;

/**
 * One argument of a measured program: its name, dtype and shape, whether it is an input (filled with seeded random
 * values) or an output (compared with the reference), and for an integer output whether its values are floats
 * rounded to integers ({@code rounded}: a quantize or requantize). Such an output may differ from the reference by
 * one step where the float value lies within float32 rounding of a half-way point: the compiled program rounds
 * products and sums in another order than the interpreter (FMA contraction on the fast-math target, a tiled
 * reduction), and one side rounds up where the other rounds down. Every other integer output must match exactly;
 * a 16-bit float output gets one unit in its last place likewise ({@link #rtol}).
 */
record ArgumentSpec(String name, DType dtype, long[] shape, boolean input, boolean rounded) {
    ArgumentSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(dtype, "dtype");
        shape = shape.clone();
        if (rounded && (input || !dtype.isInt()))
            throw new KilnException("argument '" + name + "': only an integer output can be rounded from floats");
    }

    ArgumentSpec(String name, DType dtype, long[] shape, boolean input) {
        this(name, dtype, shape, input, false);
    }

    static ArgumentSpec of(Buffer b, boolean input) {
        return new ArgumentSpec(b.name(), b.dtype(), b.constShape(), input);
    }

    /** {@code b} as an argument; an integer output with {@code rounded} when the task rounds floats to integers. */
    static ArgumentSpec of(Buffer b, boolean input, boolean rounded) {
        return new ArgumentSpec(
                b.name(),
                b.dtype(),
                b.constShape(),
                input,
                rounded && !input && b.dtype().isInt());
    }

    /**
     * The relative tolerance of this output's comparison: for a bfloat16 or float16 output at least one unit in its
     * last place (2^-7 and 2^-10 of the value at worst). Such an output is a float32 value rounded at the end (a
     * bfloat16 network's layer casting its result for the next one): summed in another order, the float32 value may
     * land on the other side of a rounding boundary, and the output is the neighbouring 16-bit value.
     */
    double rtol(double rtol) {
        return switch (dtype) {
            case BFLOAT16 -> Math.max(rtol, 0x1p-7);
            case FLOAT16 -> Math.max(rtol, 0x1p-10);
            default -> rtol;
        };
    }

    /** The absolute tolerance of this output's comparison: at least one step for a rounded integer output. */
    double atol(double atol) {
        return rounded ? Math.max(1, atol) : atol;
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
                && input == a.input
                && rounded == a.rounded;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, dtype, Arrays.hashCode(shape), input, rounded);
    }

    @Override
    public String toString() {
        return (input ? "input " : "output ") + name + ": " + dtype + Arrays.toString(shape)
                + (rounded ? " (rounded from floats)" : "");
    }
}
