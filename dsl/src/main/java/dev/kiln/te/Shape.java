package dev.kiln.te;

import dev.kiln.ir.KilnException;
import java.util.Arrays;
import java.util.List;

/** A static tensor shape: positive extents, outermost first. */
public record Shape(List<Long> dims) {
    public Shape {
        if (dims == null) throw new KilnException("shape: the list of extents is null");
        for (int d = 0; d < dims.size(); d++) {
            if (dims.get(d) == null)
                throw new KilnException("shape " + dims + ": the extent at axis " + d + " is null");
        }
        dims = List.copyOf(dims);
        for (int d = 0; d < dims.size(); d++) {
            if (dims.get(d) > Integer.MAX_VALUE) {
                throw new KilnException("shape " + dims + " has extent " + dims.get(d) + " at axis " + d
                        + ", over the int32 index range (at most " + Integer.MAX_VALUE + ")");
            }
            if (dims.get(d) <= 0) {
                throw new KilnException(
                        "shape " + dims + " has a non-positive extent " + dims.get(d) + " at axis " + d);
            }
        }
    }

    public static Shape of(long... dims) {
        if (dims == null) throw new KilnException("shape: the array of extents is null");
        return new Shape(Arrays.stream(dims).boxed().toList());
    }

    public int rank() {
        return dims.size();
    }

    public long get(int d) {
        return dims.get(d);
    }

    public long numElements() {
        long n = 1;
        for (long d : dims) {
            try {
                n = Math.multiplyExact(n, d);
            } catch (ArithmeticException e) {
                throw new KilnException("shape " + dims + " has more elements than a long can count");
            }
        }
        return n;
    }

    public long[] toArray() {
        return dims.stream().mapToLong(Long::longValue).toArray();
    }

    @Override
    public String toString() {
        return dims.toString();
    }
}
