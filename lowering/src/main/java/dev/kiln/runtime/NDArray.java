package dev.kiln.runtime;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * An n-dimensional array in off-heap memory: what every backend (the interpreter, the JIT, CUDA
 * copies) reads and writes. It has a {@link DType}, a shape and strides (in elements; compact
 * row-major by default) over a {@link MemorySegment} aligned to {@value #ALIGNMENT} bytes, in
 * native byte order.
 *
 * <p>Storage: float16 as IEEE binary16 bits, bfloat16 as the upper 16 bits of a float32 (rounded to
 * nearest even), bool as one byte 0 or 1. Values come in and out as {@code double} or {@code long}
 * and are converted with {@link Numerics}: {@link #setDouble} rounds to a floating type, and to an
 * integer type truncates and saturates (like a cast); {@link #setLong} wraps to an integer type;
 * bool stores {@code v != 0}.
 *
 * <p>An array made by {@code allocate}, {@code from*} or {@code random} owns a shared
 * {@link Arena} (so any thread may use it) and frees it on {@link #close()}; one made by
 * {@link #wrap} borrows its memory and closing it does nothing.
 */
public final class NDArray implements AutoCloseable {
    /** Byte alignment of every allocation. */
    public static final long ALIGNMENT = 64;

    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfByte I8 = ValueLayout.JAVA_BYTE;

    private final Arena arena;
    private final MemorySegment segment;
    private final DType dtype;
    private final long[] shape;
    private final long[] strides;
    private final long numElements;
    private final boolean compact;
    private boolean closed;

    private NDArray(Arena arena, MemorySegment segment, DType dtype, long[] shape, long[] strides) {
        this.arena = arena;
        this.segment = segment;
        this.dtype = dtype;
        this.shape = shape;
        this.strides = strides;
        this.numElements = ArrayLayout.count(shape);
        this.compact = Arrays.equals(strides, rowMajorStrides(shape));
    }

    // ---- creation ---------------------------------------------------------------------------

    /** A zero-filled compact row-major array. */
    public static NDArray allocate(DType dtype, long... shape) {
        ArrayLayout.requireShape("allocate", shape);
        return allocateStrided(dtype, shape, rowMajorStrides(shape));
    }

    /** A zero-filled array with the given strides (in elements, non-negative). */
    public static NDArray allocateStrided(DType dtype, long[] shape, long[] strides) {
        ArrayLayout.requireShape("allocateStrided", shape);
        if (strides == null) throw new KilnException("allocateStrided: the strides are null");
        long[] sh = shape.clone();
        long[] st = strides.clone();
        ArrayLayout.check(dtype, sh, st);
        long bytes = ArrayLayout.bytes(dtype, sh, st);
        Arena arena = Arena.ofShared();
        try {
            return new NDArray(arena, arena.allocate(bytes, ALIGNMENT), dtype, sh, st);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    /**
     * {@link #allocate(Buffer)} starting {@code offsetBytes} (a multiple of {@link #ALIGNMENT}) past an aligned
     * address: the same array somewhere else relative to the cache's sets and pages, for measurements that vary
     * where a kernel's arrays lie. The array owns (and frees) the whole block.
     */
    public static NDArray allocateOffset(Buffer buffer, long offsetBytes) {
        if (buffer == null) throw new KilnException("allocateOffset: the buffer is null");
        if (offsetBytes < 0 || offsetBytes % ALIGNMENT != 0)
            throw new KilnException("allocateOffset: the offset must be a non-negative multiple of " + ALIGNMENT
                    + " bytes, got " + offsetBytes);
        long[] sh = buffer.constShape().clone();
        long[] st = buffer.constStrides().clone();
        ArrayLayout.requireShape("allocateOffset", sh);
        ArrayLayout.check(buffer.dtype(), sh, st);
        long bytes = ArrayLayout.bytes(buffer.dtype(), sh, st);
        Arena arena = Arena.ofShared();
        try {
            MemorySegment block = arena.allocate(bytes + offsetBytes, ALIGNMENT);
            return new NDArray(arena, block.asSlice(offsetBytes, bytes), buffer.dtype(), sh, st);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    /** A zero-filled array with the dtype, constant shape and constant strides of a buffer. */
    public static NDArray allocate(Buffer buffer) {
        if (buffer == null) throw new KilnException("allocate: the buffer is null");
        return allocateStrided(buffer.dtype(), buffer.constShape(), buffer.constStrides());
    }

    /** An array over memory owned by someone else; closing it does not free the memory. */
    public static NDArray wrap(MemorySegment segment, DType dtype, long[] shape, long[] strides) {
        if (segment == null) throw new KilnException("wrap: the memory segment is null");
        ArrayLayout.requireShape("wrap", shape);
        if (strides == null) throw new KilnException("wrap: the strides are null");
        long[] sh = shape.clone();
        long[] st = strides.clone();
        ArrayLayout.check(dtype, sh, st);
        long need = ArrayLayout.bytes(dtype, sh, st);
        if (segment.byteSize() < need) {
            throw new KilnException("cannot wrap " + segment.byteSize() + " bytes as " + ArrayLayout.describe(dtype, sh)
                    + " with strides " + Arrays.toString(st) + ": it needs " + need + " bytes");
        }
        return new NDArray(null, segment, dtype, sh, st);
    }

    /** A float32 array holding {@code data} in row-major order. */
    public static NDArray fromFloats(float[] data, long... shape) {
        if (data == null) throw new KilnException("fromFloats: the data array is null");
        NDArray a = allocate(DType.FLOAT32, shape);
        a.checkLength(data.length);
        MemorySegment.copy(data, 0, a.segment, F32, 0, data.length);
        return a;
    }

    /** An array of floating type {@code dtype} holding {@code data} rounded to it. */
    public static NDArray fromFloats(DType dtype, float[] data, long... shape) {
        if (data == null) throw new KilnException("fromFloats: the data array is null");
        NDArray a = allocate(dtype, shape);
        a.checkLength(data.length);
        for (int i = 0; i < data.length; i++) a.setDoubleFlat(data[i], i);
        return a;
    }

    /** A float64 array holding {@code data} in row-major order. */
    public static NDArray fromDoubles(double[] data, long... shape) {
        if (data == null) throw new KilnException("fromDoubles: the data array is null");
        NDArray a = allocate(DType.FLOAT64, shape);
        a.checkLength(data.length);
        MemorySegment.copy(data, 0, a.segment, F64, 0, data.length);
        return a;
    }

    /** An array of any type holding {@code data} converted as by {@link #setDouble}. */
    public static NDArray fromDoubles(DType dtype, double[] data, long... shape) {
        if (data == null) throw new KilnException("fromDoubles: the data array is null");
        NDArray a = allocate(dtype, shape);
        a.checkLength(data.length);
        for (int i = 0; i < data.length; i++) a.setDoubleFlat(data[i], i);
        return a;
    }

    /** An int32 array holding {@code data} in row-major order. */
    public static NDArray fromInts(int[] data, long... shape) {
        if (data == null) throw new KilnException("fromInts: the data array is null");
        NDArray a = allocate(DType.INT32, shape);
        a.checkLength(data.length);
        MemorySegment.copy(data, 0, a.segment, I32, 0, data.length);
        return a;
    }

    /** An int64 array holding {@code data} in row-major order. */
    public static NDArray fromLongs(long[] data, long... shape) {
        if (data == null) throw new KilnException("fromLongs: the data array is null");
        NDArray a = allocate(DType.INT64, shape);
        a.checkLength(data.length);
        MemorySegment.copy(data, 0, a.segment, I64, 0, data.length);
        return a;
    }

    /** An array of any type holding {@code data} converted as by {@link #setLong} (integers wrap). */
    public static NDArray fromLongs(DType dtype, long[] data, long... shape) {
        if (data == null) throw new KilnException("fromLongs: the data array is null");
        NDArray a = allocate(dtype, shape);
        a.checkLength(data.length);
        for (int i = 0; i < data.length; i++) a.setLongFlat(data[i], i);
        return a;
    }

    /**
     * An int8, uint8 or bool array holding the raw bytes (for uint8, byte -1 is 255; for bool every
     * byte must be 0 or 1).
     */
    public static NDArray fromBytes(DType dtype, byte[] data, long... shape) {
        if (data == null) throw new KilnException("fromBytes: the data array is null");
        if (dtype != DType.INT8 && dtype != DType.UINT8 && dtype != DType.BOOL) {
            throw new KilnException("fromBytes makes int8, uint8 or bool arrays, not " + dtype);
        }
        if (dtype == DType.BOOL) {
            for (int i = 0; i < data.length; i++) {
                if (data[i] != 0 && data[i] != 1) {
                    throw new KilnException("bool array element " + i + " is " + data[i] + ", not 0 or 1");
                }
            }
        }
        NDArray a = allocate(dtype, shape);
        a.checkLength(data.length);
        MemorySegment.copy(data, 0, a.segment, I8, 0, data.length);
        return a;
    }

    /** A compact array of seeded random values; see {@link #fillRandom}. */
    public static NDArray random(DType dtype, long seed, long... shape) {
        if (dtype == null) throw new KilnException("random: the dtype is null");
        return allocate(dtype, shape).fillRandom(seed);
    }

    /**
     * Fills the array with values from {@code new SplittableRandom(seed)} in row-major order:
     * floats uniform in [-1, 1) (rounded to the type, and kept below 1), signed integers in
     * [-8, 8), uint8 in [0, 16), bool 0 or 1. If every value drawn is 0, the first element is set
     * to 1, so a random array is never all zeros.
     *
     * @return this array
     */
    public NDArray fillRandom(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        boolean nonZero = false;
        for (long i = 0; i < numElements; i++) {
            if (dtype.isFloat()) {
                double v = Numerics.roundFloat(dtype, r.nextDouble() * 2 - 1);
                if (v >= 1) v = largestBelowOne(dtype);
                setDoubleFlat(v, i);
                nonZero |= v != 0;
            } else {
                long v =
                        switch (dtype.kind()) {
                            case INT -> r.nextLong(-8, 8);
                            case UINT -> r.nextLong(0, 16);
                            case BOOL -> r.nextLong(0, 2);
                            case FLOAT -> throw new IllegalStateException();
                        };
                setLongFlat(v, i);
                nonZero |= v != 0;
            }
        }
        if (!nonZero && numElements > 0) setLongFlat(1, 0);
        return this;
    }

    private static double largestBelowOne(DType t) {
        return switch (t) {
            case FLOAT16 -> 1 - 0x1p-11;
            case BFLOAT16 -> 1 - 0x1p-8;
            case FLOAT32 -> Math.nextDown(1.0f);
            default -> Math.nextDown(1.0);
        };
    }

    /** A compact copy in fresh memory. */
    public NDArray copy() {
        NDArray c = allocate(dtype, shape);
        c.copyFrom(this);
        return c;
    }

    /** Copies the elements of {@code src} (same dtype and shape, any strides) into this array. */
    public void copyFrom(NDArray src) {
        if (src == null) throw new KilnException("copy into " + this + ": the source array is null");
        requireSameKind(src, "copy from");
        int b = dtype.bytes();
        for (long i = 0; i < numElements; i++) {
            MemorySegment.copy(src.segment, src.offsetOfFlat(i) * b, segment, offsetOfFlat(i) * b, b);
        }
    }

    // ---- properties -------------------------------------------------------------------------

    public MemorySegment segment() {
        return segment;
    }

    public DType dtype() {
        return dtype;
    }

    public long[] shape() {
        return shape.clone();
    }

    /** Strides in elements. */
    public long[] strides() {
        return strides.clone();
    }

    public int rank() {
        return shape.length;
    }

    public long numElements() {
        return numElements;
    }

    /** Whether the strides are the compact row-major ones of the shape. */
    public boolean isCompact() {
        return compact;
    }

    /** Whether this array frees its memory on {@link #close()}. */
    public boolean ownsMemory() {
        return arena != null;
    }

    /** Row-major strides of a shape, in elements. */
    public static long[] rowMajorStrides(long... shape) {
        return ArrayLayout.rowMajorStrides(shape);
    }

    // ---- element access ---------------------------------------------------------------------

    /** The element at {@code index} as a double (integers and bool converted exactly up to 2^53). */
    public double getDouble(long... index) {
        return readDouble(offsetOf(index));
    }

    /** Sets the element at {@code index}: floats round, integers truncate and saturate, bool is v != 0. */
    public void setDouble(double v, long... index) {
        writeDouble(offsetOf(index), v);
    }

    /** The element at {@code index} as a long (floats truncate toward zero and saturate, NaN is 0). */
    public long getLong(long... index) {
        return readLong(offsetOf(index));
    }

    /** Sets the element at {@code index}: integers wrap to the type, floats round, bool is v != 0. */
    public void setLong(long v, long... index) {
        writeLong(offsetOf(index), v);
    }

    /** The element at row-major position {@code i} (the memory position for a compact array). */
    public double getDoubleFlat(long i) {
        return readDouble(offsetOfFlat(i));
    }

    public void setDoubleFlat(double v, long i) {
        writeDouble(offsetOfFlat(i), v);
    }

    public long getLongFlat(long i) {
        return readLong(offsetOfFlat(i));
    }

    public void setLongFlat(long v, long i) {
        writeLong(offsetOfFlat(i), v);
    }

    /** All elements in row-major order, converted to float. */
    public float[] toFloatArray() {
        float[] out = new float[checkedLength()];
        if (compact && dtype == DType.FLOAT32) {
            MemorySegment.copy(segment, F32, 0, out, 0, out.length);
            return out;
        }
        for (int i = 0; i < out.length; i++) out[i] = (float) getDoubleFlat(i);
        return out;
    }

    /** All elements in row-major order, converted to double. */
    public double[] toDoubleArray() {
        double[] out = new double[checkedLength()];
        for (int i = 0; i < out.length; i++) out[i] = getDoubleFlat(i);
        return out;
    }

    /** All elements in row-major order, converted to long as by {@link #getLong}. */
    public long[] toLongArray() {
        long[] out = new long[checkedLength()];
        for (int i = 0; i < out.length; i++) out[i] = getLongFlat(i);
        return out;
    }

    private double readDouble(long off) {
        return switch (dtype) {
            case FLOAT32 -> segment.get(F32, off * 4);
            case FLOAT64 -> segment.get(F64, off * 8);
            case FLOAT16 -> Numerics.fromFloat16Bits(segment.get(I16, off * 2));
            case BFLOAT16 -> Numerics.fromBFloat16Bits(segment.get(I16, off * 2));
            case INT8, INT16, INT32, INT64, UINT8, BOOL -> (double) readLong(off);
        };
    }

    private long readLong(long off) {
        return switch (dtype) {
            case INT8 -> segment.get(I8, off);
            case UINT8 -> segment.get(I8, off) & 0xFF;
            case BOOL -> segment.get(I8, off) != 0 ? 1 : 0;
            case INT16 -> segment.get(I16, off * 2);
            case INT32 -> segment.get(I32, off * 4);
            case INT64 -> segment.get(I64, off * 8);
            case FLOAT16, BFLOAT16, FLOAT32, FLOAT64 -> Numerics.floatToInt(DType.INT64, readDouble(off));
        };
    }

    private void writeDouble(long off, double v) {
        switch (dtype) {
            case FLOAT32 -> segment.set(F32, off * 4, (float) v);
            case FLOAT64 -> segment.set(F64, off * 8, v);
            case FLOAT16 -> segment.set(I16, off * 2, Numerics.toFloat16Bits(v));
            case BFLOAT16 -> segment.set(I16, off * 2, Numerics.toBFloat16Bits(v));
            case INT8, INT16, INT32, INT64, UINT8, BOOL -> writeInt(off, Numerics.floatToInt(dtype, v));
        }
    }

    private void writeLong(long off, long v) {
        if (dtype.isFloat()) writeDouble(off, Numerics.intToFloat(dtype, v));
        else writeInt(off, Numerics.wrap(dtype, v));
    }

    /** Stores an integer already reduced to the type. */
    private void writeInt(long off, long v) {
        switch (dtype) {
            case INT8, UINT8, BOOL -> segment.set(I8, off, (byte) v);
            case INT16 -> segment.set(I16, off * 2, (short) v);
            case INT32 -> segment.set(I32, off * 4, (int) v);
            case INT64 -> segment.set(I64, off * 8, v);
            case FLOAT16, BFLOAT16, FLOAT32, FLOAT64 -> throw new IllegalStateException();
        }
    }

    /** Element offset of a multi-index, bounds-checked per dimension. */
    private long offsetOf(long[] index) {
        requireOpen();
        if (index == null) throw new KilnException("array " + this + ": the index is null");
        if (index.length != shape.length) {
            throw new KilnException("array " + this + " has rank " + shape.length + " but was indexed with "
                    + index.length + " index(es) " + Arrays.toString(index));
        }
        long off = 0;
        for (int d = 0; d < index.length; d++) {
            if (index[d] < 0 || index[d] >= shape[d]) {
                throw new KilnException("index " + Arrays.toString(index) + " is out of bounds for array " + this
                        + ": dimension " + d + " index " + index[d] + " is outside [0, " + shape[d] + ")");
            }
            off += index[d] * strides[d];
        }
        return off;
    }

    /** Element offset of row-major position {@code i}. */
    private long offsetOfFlat(long i) {
        requireOpen();
        if (i < 0 || i >= numElements) {
            throw new KilnException(
                    "flat index " + i + " is out of bounds for array " + this + " of " + numElements + " elements");
        }
        if (compact) return i;
        long off = 0;
        for (int d = shape.length - 1; d >= 0; d--) {
            off += (i % shape[d]) * strides[d];
            i /= shape[d];
        }
        return off;
    }

    /** The multi-index of row-major position {@code i}. */
    public long[] unravel(long i) {
        if (i < 0 || i >= numElements) {
            throw new KilnException(
                    "flat index " + i + " is out of bounds for array " + this + " of " + numElements + " elements");
        }
        long[] idx = new long[shape.length];
        for (int d = shape.length - 1; d >= 0; d--) {
            idx[d] = i % shape[d];
            i /= shape[d];
        }
        return idx;
    }

    // ---- comparison -------------------------------------------------------------------------

    /**
     * Compares this (actual) array with {@code expected} element by element; see
     * {@link Comparison} for the rule. Throws {@link KilnException} if dtypes or shapes differ.
     */
    public Comparison compareTo(NDArray expected, double rtol, double atol) {
        if (expected == null) throw new KilnException("compare " + this + ": the expected array is null");
        if (!(rtol >= 0) || !(atol >= 0)) {
            throw new KilnException(
                    "compare " + this + ": tolerances must be non-negative, got rtol " + rtol + ", atol " + atol);
        }
        requireSameKind(expected, "compare");
        return Comparison.of(this, expected, rtol, atol);
    }

    /** Throws an {@link AssertionError} with {@link Comparison#report()} unless the arrays are close. */
    public void assertClose(NDArray expected, double rtol, double atol) {
        if (expected == null) throw new KilnException("assertClose " + this + ": the expected array is null");
        if (dtype != expected.dtype || !Arrays.equals(shape, expected.shape)) {
            throw new AssertionError("cannot compare " + this + " with expected " + expected
                    + (dtype != expected.dtype ? ": dtypes differ" : ": shapes differ"));
        }
        Comparison c = compareTo(expected, rtol, atol);
        if (!c.ok()) throw new AssertionError(c.report());
    }

    private void requireSameKind(NDArray other, String what) {
        if (dtype != other.dtype) {
            throw new KilnException("cannot " + what + " " + other + " and " + this + ": dtypes differ");
        }
        if (!Arrays.equals(shape, other.shape)) {
            throw new KilnException("cannot " + what + " " + other + " and " + this + ": shapes differ");
        }
    }

    // ---- printing and lifetime ----------------------------------------------------------------

    /** {@code NDArray(float32[2, 3])}. */
    @Override
    public String toString() {
        return "NDArray(" + ArrayLayout.describe(dtype, shape) + ")";
    }

    /** Type, shape and the first {@code maxElements} values, nested by dimension, then "...". */
    public String format(int maxElements) {
        return ArrayFormat.format(this, maxElements);
    }

    /** Frees the memory if this array owns it; later accesses fail. Closing twice is harmless. */
    @Override
    public void close() {
        if (arena != null && !closed) {
            closed = true;
            arena.close();
        }
    }

    // ---- helpers ------------------------------------------------------------------------------

    private void requireOpen() {
        if (closed) throw new KilnException("array " + this + " is closed; its memory was freed");
    }

    private void checkLength(int length) {
        if (length != numElements) {
            close();
            throw new KilnException(
                    length + " values given for shape " + Arrays.toString(shape) + " (" + numElements + " elements)");
        }
    }

    private int checkedLength() {
        requireOpen();
        if (numElements > Integer.MAX_VALUE - 8) {
            throw new KilnException("array " + this + " has too many elements for a Java array");
        }
        return (int) numElements;
    }
}
