package dev.kiln.arith;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;

/**
 * A closed interval {@code [min, max]} of integers: what is known about an integer value, such as
 * the values a loop variable takes. {@code min <= max} always (an empty range is not representable:
 * a loop that never runs has no range to give).
 */
public record IntRange(long min, long max) {
    public IntRange {
        if (min > max) throw new KilnException("empty integer range [" + min + ", " + max + "]");
    }

    public static IntRange of(long min, long max) {
        return new IntRange(min, max);
    }

    /** The range of a constant. */
    public static IntRange single(long v) {
        return new IntRange(v, v);
    }

    /** The values of a loop {@code for v in [min, min + extent)}; {@code extent} must be positive. */
    public static IntRange ofExtent(long min, long extent) {
        if (extent <= 0) throw new KilnException("a loop of extent " + extent + " has no range of values");
        return new IntRange(min, Math.addExact(min, extent - 1));
    }

    /** Every value of an integer or bool type. */
    public static IntRange full(DType t) {
        if (t.isFloat()) throw new KilnException(t + " is not an integer type and has no integer range");
        return new IntRange(t.minInt(), t.maxInt());
    }

    public boolean isSingle() {
        return min == max;
    }

    public boolean contains(long v) {
        return min <= v && v <= max;
    }

    /** Whether every value of this range is in {@code other}. */
    public boolean within(IntRange other) {
        return other.min <= min && max <= other.max;
    }

    /** The smallest range holding both. */
    public IntRange union(IntRange o) {
        return new IntRange(Math.min(min, o.min), Math.max(max, o.max));
    }

    /** The common part, or null when the ranges do not meet. */
    public IntRange intersect(IntRange o) {
        long lo = Math.max(min, o.min), hi = Math.min(max, o.max);
        return lo <= hi ? new IntRange(lo, hi) : null;
    }

    @Override
    public String toString() {
        return "[" + min + ", " + max + "]";
    }
}
