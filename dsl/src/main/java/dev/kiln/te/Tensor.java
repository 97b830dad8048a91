package dev.kiln.te;

import dev.kiln.ir.DType;
import dev.kiln.ir.DataProducer;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.TensorRead;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A tensor of the DSL: output {@code valueIndex} of an {@link Operation}, with a static shape and
 * a dtype. Read it inside a {@code compute} body with {@link #at}. Tensors compare by identity.
 */
public final class Tensor implements DataProducer {
    private final Operation op;
    private final int valueIndex;
    private final String name;
    private final Shape shape;
    private final DType dtype;

    Tensor(Operation op, int valueIndex, String name, Shape shape, DType dtype) {
        this.op = op;
        this.valueIndex = valueIndex;
        this.name = name;
        this.shape = shape;
        this.dtype = dtype;
    }

    /**
     * The tensor {@code read} reads. Every read built by the DSL reads a {@code Tensor}; a read of
     * another {@link DataProducer} is a {@link KilnException}.
     */
    public static Tensor of(TensorRead read) {
        if (read.tensor() instanceof Tensor t) return t;
        throw new KilnException("read " + read + " reads '" + read.tensor().name() + "', a "
                + read.tensor().getClass().getSimpleName() + ", not a DSL tensor");
    }

    public Operation op() {
        return op;
    }

    public int valueIndex() {
        return valueIndex;
    }

    @Override
    public String name() {
        return name;
    }

    public Shape shape() {
        return shape;
    }

    @Override
    public DType dtype() {
        return dtype;
    }

    @Override
    public int rank() {
        return shape.rank();
    }

    /** Extent of axis {@code d}. */
    @Override
    public long dim(int d) {
        return shape.get(d);
    }

    /** {@code this[indices...]}; the number of indices must equal the rank. */
    public Expr at(Expr... indices) {
        if (indices == null) throw new KilnException("tensor '" + name + "': the index array is null");
        return at(Arrays.asList(indices));
    }

    /** {@code this[indices...]} from a list (for rank-generic code). */
    public Expr at(List<? extends Expr> indices) {
        if (indices == null) throw new KilnException("tensor '" + name + "': the index list is null");
        for (int d = 0; d < indices.size(); d++) {
            if (indices.get(d) == null) {
                throw new KilnException("tensor '" + name + "' (shape " + shape + "): index " + d + " is null");
            }
        }
        return new TensorRead(this, new ArrayList<>(indices));
    }

    /** {@code this[c...]} with constant int32 indices. */
    public Expr at(long... indices) {
        if (indices == null) throw new KilnException("tensor '" + name + "': the index array is null");
        List<Expr> idx = new ArrayList<>();
        for (int d = 0; d < indices.length; d++) {
            long i = indices[d];
            if (d < shape.rank() && (i < 0 || i >= shape.get(d))) {
                throw new KilnException("tensor '" + name + "' (shape " + shape + "): constant index " + i
                        + " is out of range for axis " + d);
            }
            idx.add(IntImm.i32(Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, i))));
        }
        return new TensorRead(this, idx);
    }

    public boolean isPlaceholder() {
        return op instanceof PlaceholderOp;
    }

    @Override
    public String toString() {
        return name + shape + ":" + dtype;
    }
}
