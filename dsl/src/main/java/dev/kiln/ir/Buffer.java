package dev.kiln.ir;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A region of memory the loop IR reads and writes: name, element type, shape and strides (in
 * elements), and scope. Buffers compare by identity, like {@link Var}. A buffer read is a
 * {@link BufferLoad} with one index per dimension; the address is {@code sum(index[d] * stride[d])}.
 */
public final class Buffer {
    private final String name;
    private final DType dtype;
    private final List<Expr> shape;
    private final List<Expr> strides;
    private final MemoryScope scope;
    private final Buffer base;

    public Buffer(String name, DType dtype, List<Expr> shape, List<Expr> strides, MemoryScope scope) {
        this(name, dtype, shape, strides, scope, null);
    }

    private Buffer(String name, DType dtype, List<Expr> shape, List<Expr> strides, MemoryScope scope, Buffer base) {
        this.base = base;
        this.name = Objects.requireNonNull(name, "name");
        this.dtype = Objects.requireNonNull(dtype, "dtype");
        this.shape = List.copyOf(shape);
        this.strides = List.copyOf(strides);
        this.scope = Objects.requireNonNull(scope, "scope");
        if (this.shape.size() != this.strides.size()) {
            throw new KilnException(
                    "buffer '" + name + "' has " + shape.size() + " dims but " + strides.size() + " strides");
        }
        for (int d = 0; d < this.shape.size(); d++) {
            if (this.shape.get(d) instanceof IntImm c && c.value() <= 0) {
                throw new KilnException("buffer '" + name + "' dim " + d + " has non-positive extent " + c.value());
            }
        }
    }

    /**
     * The buffer that owns this one's memory: itself, unless this is a view made by
     * {@link #flatView()}. Backends bind memory to {@code base()}.
     */
    public Buffer base() {
        return base == null ? this : base;
    }

    public boolean isView() {
        return base != null;
    }

    /**
     * A rank-1 view of the same memory, indexed by the element offset
     * {@code sum(index[d] * stride[d])}; its extent is the span of the buffer (padding included).
     * The storage-flatten pass rewrites every access through such views.
     */
    public Buffer flatView() {
        long span = 1;
        long[] sh = constShape(), st = constStrides();
        for (int d = 0; d < sh.length; d++) span = Math.addExact(span, Math.multiplyExact(sh[d] - 1, st[d]));
        return new Buffer(name, dtype, List.of(IntImm.i32(span)), List.of(IntImm.i32(1)), scope, base());
    }

    /** A compact row-major buffer of constant shape. */
    public static Buffer rowMajor(String name, DType dtype, List<Long> shape, MemoryScope scope) {
        List<Expr> sh = new ArrayList<>();
        List<Expr> st = new ArrayList<>();
        long stride = 1;
        for (int d = shape.size() - 1; d >= 0; d--) {
            st.addFirst(IntImm.i32(stride));
            stride = Math.multiplyExact(stride, shape.get(d));
        }
        for (long s : shape) sh.add(IntImm.i32(s));
        return new Buffer(name, dtype, sh, st, scope);
    }

    public String name() {
        return name;
    }

    public DType dtype() {
        return dtype;
    }

    public List<Expr> shape() {
        return shape;
    }

    public List<Expr> strides() {
        return strides;
    }

    public MemoryScope scope() {
        return scope;
    }

    public int rank() {
        return shape.size();
    }

    /** The constant shape, or throws naming the buffer if some extent is symbolic. */
    public long[] constShape() {
        long[] out = new long[shape.size()];
        for (int d = 0; d < out.length; d++) {
            if (!(shape.get(d) instanceof IntImm c)) {
                throw new KilnException("buffer '" + name + "' dim " + d + " is not constant: " + shape.get(d));
            }
            out[d] = c.value();
        }
        return out;
    }

    /** The constant strides, or throws naming the buffer if some stride is symbolic. */
    public long[] constStrides() {
        long[] out = new long[strides.size()];
        for (int d = 0; d < out.length; d++) {
            if (!(strides.get(d) instanceof IntImm c)) {
                throw new KilnException("buffer '" + name + "' stride " + d + " is not constant: " + strides.get(d));
            }
            out[d] = c.value();
        }
        return out;
    }

    /** Number of elements, for a constant shape. */
    public long numElements() {
        long n = 1;
        for (long s : constShape()) n = Math.multiplyExact(n, s);
        return n;
    }

    @Override
    public String toString() {
        return name;
    }
}
