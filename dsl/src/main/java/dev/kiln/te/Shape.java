package dev.kiln.te;

import dev.kiln.ir.KilnException;
import java.util.Arrays;
import java.util.List;

/** A static tensor shape: positive extents, outermost first. */
public record Shape(List<Long> dims) {
    public Shape {
        dims = List.copyOf(dims);
        for (int d = 0; d < dims.size(); d++) {
            if (dims.get(d) <= 0) {
                throw new KilnException("shape " + dims + " has a non-positive extent " + dims.get(d) + " at axis " + d);
            }
        }
    }

    public static Shape of(long... dims) {
        return new Shape(Arrays.stream(dims).boxed().toList());
    }

    public int rank() { return dims.size(); }

    public long get(int d) { return dims.get(d); }

    public long numElements() {
        long n = 1;
        for (long d : dims) n = Math.multiplyExact(n, d);
        return n;
    }

    public long[] toArray() { return dims.stream().mapToLong(Long::longValue).toArray(); }

    @Override
    public String toString() { return dims.toString(); }
}
