package dev.kiln.graph;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import java.util.List;
import java.util.Objects;

/**
 * A tensor value of a {@link Graph}: a graph input, a constant (weight) or the output of a node,
 * known by its name, which is unique in the graph.
 */
public record Value(String name, DType dtype, List<Long> shape) {
    public Value {
        Objects.requireNonNull(dtype, "dtype");
        if (name == null || name.isBlank()) throw new KilnException("a graph value needs a name");
        shape = List.copyOf(shape);
        for (int d = 0; d < shape.size(); d++) {
            if (shape.get(d) < 1)
                throw new KilnException("value '" + name + "': axis " + d + " has extent " + shape.get(d));
        }
    }

    /** The shape as an array. */
    public long[] dims() {
        return shape.stream().mapToLong(Long::longValue).toArray();
    }

    /** The number of elements. */
    public long numElements() {
        long n = 1;
        for (long d : shape) n = Math.multiplyExact(n, d);
        return n;
    }

    /** The size in bytes. */
    public long bytes() {
        return numElements() * dtype.bytes();
    }

    @Override
    public String toString() {
        return name + shape + ":" + dtype;
    }
}
