package dev.kiln.onnx;

import dev.kiln.graph.GraphBuilder;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.proto.Onnx.TensorProto;
import dev.kiln.runtime.NDArray;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A tensor known at import (an initializer, a Constant, a folded Shape/Gather/...): float data
 * (float, double and half are read as float32) or integer data (every integer type and bool, as
 * long), row-major, with the Kiln type it becomes in the graph ({@link #dtype}: float32, or the
 * integer type of the ONNX tensor; shape arithmetic gives int64). Shape arithmetic and weight
 * transposes run on these in Java.
 */
record Const(long[] shape, float[] floats, long[] longs, DType dtype) {

    Const {
        shape = shape.clone();
        if ((floats == null) == (longs == null)) throw new IllegalArgumentException("exactly one of floats, longs");
        if ((floats != null) != (dtype == DType.FLOAT32))
            throw new IllegalArgumentException("float data is float32, integer data an integer type: " + dtype);
        long n = count(shape);
        if ((floats != null ? floats.length : longs.length) != n) {
            throw new KilnException("constant of shape " + Arrays.toString(shape) + " holds "
                    + (floats != null ? floats.length : longs.length) + " elements, not " + n);
        }
    }

    /** A copy of the shape. */
    @Override
    public long[] shape() {
        return shape.clone();
    }

    static Const ofFloats(float[] data, long... shape) {
        return new Const(shape, data, null, DType.FLOAT32);
    }

    static Const ofLongs(long[] data, long... shape) {
        return new Const(shape, null, data, DType.INT64);
    }

    /** Integer data of type {@code t} (int8, uint8, int32, ...). */
    static Const ofInts(DType t, long[] data, long... shape) {
        return new Const(shape, null, data, t);
    }

    /** The same integer data as type {@code t}. */
    Const as(DType t) {
        return isFloat() ? toLong().as(t) : ofInts(t, longs, shape);
    }

    boolean isFloat() {
        return floats != null;
    }

    int rank() {
        return shape.length;
    }

    int size() {
        return isFloat() ? floats.length : longs.length;
    }

    double get(int i) {
        return isFloat() ? floats[i] : longs[i];
    }

    long getLong(int i) {
        return isFloat() ? (long) floats[i] : longs[i];
    }

    /** The values as longs (shape inputs, axes); {@code what} names the input for the error. */
    long[] toLongs(String what) {
        if (isFloat()) throw new KilnException(what + " must be an integer tensor, got float");
        return longs.clone();
    }

    /** The one value of a tensor with one element. */
    double scalar(String what) {
        if (size() != 1) throw new KilnException(what + " must hold one value, got shape " + Arrays.toString(shape));
        return get(0);
    }

    Const reshape(long... newShape) {
        return isFloat() ? ofFloats(floats, newShape) : ofInts(dtype, longs, newShape);
    }

    Const toFloat() {
        if (isFloat()) return this;
        float[] f = new float[longs.length];
        for (int i = 0; i < f.length; i++) f[i] = longs[i];
        return ofFloats(f, shape);
    }

    Const toLong() {
        if (!isFloat()) return this;
        long[] l = new long[floats.length];
        for (int i = 0; i < l.length; i++) l[i] = (long) floats[i];
        return ofLongs(l, shape);
    }

    /** Output axis d is input axis perm[d]. */
    Const transpose(int... perm) {
        int r = rank();
        long[] outShape = new long[r];
        for (int d = 0; d < r; d++) outShape[d] = shape[perm[d]];
        long[] inStrides = NDArray.rowMajorStrides(shape);
        int n = size();
        int[] src = new int[n];
        long[] idx = new long[r];
        for (int i = 0; i < n; i++) {
            long off = 0;
            for (int d = 0; d < r; d++) off += idx[d] * inStrides[perm[d]];
            src[i] = (int) off;
            for (int d = r - 1; d >= 0 && ++idx[d] == outShape[d]; d--) idx[d] = 0;
        }
        return gather(src, outShape);
    }

    /** The elements at flat positions {@code src}, under {@code newShape}. */
    Const gather(int[] src, long[] newShape) {
        if (isFloat()) {
            float[] f = new float[src.length];
            for (int i = 0; i < f.length; i++) f[i] = floats[src[i]];
            return ofFloats(f, newShape);
        }
        long[] l = new long[src.length];
        for (int i = 0; i < l.length; i++) l[i] = longs[src[i]];
        return ofInts(dtype, l, newShape);
    }

    /** An array of {@link #dtype} for the graph (memory the garbage collector frees). */
    NDArray toNDArray(String name) {
        NDArray a = GraphBuilder.autoArray(dtype, shape);
        if (isFloat()) {
            MemorySegment.copy(floats, 0, a.segment(), ValueLayout.JAVA_FLOAT_UNALIGNED, 0, floats.length);
        } else {
            for (int i = 0; i < longs.length; i++) a.setLongFlat(longs[i], i);
        }
        return a;
    }

    static long count(long[] shape) {
        long n = 1;
        for (long d : shape) {
            if (d < 0) throw new KilnException("negative extent in shape " + Arrays.toString(shape));
            n = Math.multiplyExact(n, d);
        }
        if (n > Integer.MAX_VALUE)
            throw new KilnException("tensor of shape " + Arrays.toString(shape) + " is too large");
        return n;
    }

    /**
     * Decodes a Constant's value (raw_data or the typed fields); external data is refused (no model file to read it
     * from).
     */
    static Const of(TensorProto t) {
        return of(t, null);
    }

    /**
     * Decodes an initializer: raw_data, the typed fields, or external data (ONNX's side files, as
     * models over 2 GB are saved) read from {@code dir}, the directory of the model file.
     */
    static Const of(TensorProto t, Path dir) {
        String name = t.getName().isEmpty() ? "(unnamed tensor)" : "'" + t.getName() + "'";
        if (t.hasSegment()) throw new KilnException("tensor " + name + " is segmented, which Kiln does not read");
        ByteBuffer external = null;
        if (t.getDataLocation() == TensorProto.DataLocation.EXTERNAL || t.getExternalDataCount() > 0) {
            if (dir == null) {
                throw new KilnException(
                        "tensor " + name + " keeps its data in an external file; load the model from its file "
                                + "(OnnxImporter.load) so the file can be found");
            }
            external = ExternalData.read(t, dir, name);
        }
        long[] shape = t.getDimsList().stream().mapToLong(Long::longValue).toArray();
        int n = (int) count(shape);
        TensorProto.DataType dt = TensorProto.DataType.forNumber(t.getDataType());
        if (dt == null) throw new KilnException("tensor " + name + " has unknown data type " + t.getDataType());
        ByteBuffer raw = external != null
                ? external.order(ByteOrder.LITTLE_ENDIAN)
                : t.hasRawData() ? t.getRawData().asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN) : null;
        int have = raw != null
                ? raw.remaining() / Math.max(1, width(dt, name))
                : switch (dt) {
                    case FLOAT, FLOAT16, BFLOAT16 ->
                        dt == TensorProto.DataType.FLOAT ? t.getFloatDataCount() : t.getInt32DataCount();
                    case DOUBLE -> t.getDoubleDataCount();
                    case INT64 -> t.getInt64DataCount();
                    case UINT64, UINT32 -> t.getUint64DataCount();
                    default -> t.getInt32DataCount();
                };
        if (have != n) {
            throw new KilnException("tensor " + name + " of shape " + Arrays.toString(shape) + " (" + dt + ") holds "
                    + have + " elements, not " + n + " (malformed data)");
        }
        switch (dt) {
            case FLOAT, DOUBLE, FLOAT16, BFLOAT16 -> {
                float[] f = new float[n];
                for (int i = 0; i < n; i++) {
                    f[i] = switch (dt) {
                        case FLOAT -> raw != null ? raw.getFloat(4 * i) : t.getFloatData(i);
                        case DOUBLE -> (float) (raw != null ? raw.getDouble(8 * i) : t.getDoubleData(i));
                        case FLOAT16 ->
                            Float.float16ToFloat((short) (raw != null ? raw.getShort(2 * i) : t.getInt32Data(i)));
                        default -> Float.intBitsToFloat((raw != null ? raw.getShort(2 * i) : t.getInt32Data(i)) << 16);
                    };
                }
                return ofFloats(f, shape);
            }
            case INT64, INT32, INT16, INT8, UINT8, UINT16, UINT32, UINT64, BOOL -> {
                long[] l = new long[n];
                for (int i = 0; i < n; i++) {
                    l[i] = switch (dt) {
                        case INT64 -> raw != null ? raw.getLong(8 * i) : t.getInt64Data(i);
                        case UINT64 -> raw != null ? raw.getLong(8 * i) : t.getUint64Data(i);
                        case INT32 -> raw != null ? raw.getInt(4 * i) : t.getInt32Data(i);
                        case UINT32 -> raw != null ? Integer.toUnsignedLong(raw.getInt(4 * i)) : t.getUint64Data(i);
                        case INT16 -> raw != null ? raw.getShort(2 * i) : t.getInt32Data(i);
                        case UINT16 -> raw != null ? Short.toUnsignedLong(raw.getShort(2 * i)) : t.getInt32Data(i);
                        case INT8 -> raw != null ? raw.get(i) : t.getInt32Data(i);
                        default -> raw != null ? Byte.toUnsignedLong(raw.get(i)) : t.getInt32Data(i);
                    };
                }
                return ofInts(OnnxTypes.integer(dt), l, shape);
            }
            default ->
                throw new KilnException("tensor " + name + " has data type " + dt + ", which Kiln does not read");
        }
    }

    private static int width(TensorProto.DataType dt, String name) {
        return switch (dt) {
            case FLOAT, INT32, UINT32 -> 4;
            case DOUBLE, INT64, UINT64 -> 8;
            case FLOAT16, BFLOAT16, INT16, UINT16 -> 2;
            case INT8, UINT8, BOOL -> 1;
            default ->
                throw new KilnException("tensor " + name + " has data type " + dt + ", which Kiln does not read");
        };
    }
}
