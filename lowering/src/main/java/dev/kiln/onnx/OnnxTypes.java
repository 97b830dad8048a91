package dev.kiln.onnx;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.proto.Onnx.TensorProto.DataType;

/** ONNX element types and the Kiln types they become. */
final class OnnxTypes {
    private OnnxTypes() {}

    /**
     * The Kiln type of integer ONNX data: int8, uint8, int16, int32, int64 and bool map one to one;
     * uint16, uint32 and uint64 (which Kiln has no type for) are held as int64.
     */
    static DType integer(DataType dt) {
        return switch (dt) {
            case INT8 -> DType.INT8;
            case UINT8 -> DType.UINT8;
            case INT16 -> DType.INT16;
            case INT32 -> DType.INT32;
            case BOOL -> DType.BOOL;
            case INT64, UINT16, UINT32, UINT64 -> DType.INT64;
            default -> throw new KilnException("data type " + dt + " is not an integer type");
        };
    }

    /** The Kiln type of a graph input, output or Cast target ({@code what} names it in the error). */
    static DType of(int onnxType, String what) {
        DataType dt = DataType.forNumber(onnxType);
        if (dt == null) throw new KilnException(what + " has unknown element type " + onnxType);
        return switch (dt) {
            case FLOAT -> DType.FLOAT32;
            case INT8, UINT8, INT16, INT32, INT64, BOOL -> integer(dt);
            default ->
                throw new KilnException(what + " has element type " + dt
                        + "; Kiln's ONNX import takes float, int8, uint8, int16, int32, int64 and bool");
        };
    }

    /** The ONNX element type of a Kiln type. */
    static DataType onnx(DType t) {
        return switch (t) {
            case FLOAT32 -> DataType.FLOAT;
            case FLOAT64 -> DataType.DOUBLE;
            case FLOAT16 -> DataType.FLOAT16;
            case BFLOAT16 -> DataType.BFLOAT16;
            case INT8 -> DataType.INT8;
            case UINT8 -> DataType.UINT8;
            case INT16 -> DataType.INT16;
            case INT32 -> DataType.INT32;
            case INT64 -> DataType.INT64;
            case BOOL -> DataType.BOOL;
        };
    }
}
