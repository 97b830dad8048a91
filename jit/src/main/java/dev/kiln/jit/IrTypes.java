package dev.kiln.jit;

import dev.kiln.ir.DType;
import dev.kiln.runtime.Numerics;

/**
 * How Kiln's data types live in LLVM IR. In registers float16 and bfloat16 values are held as
 * {@code float} (always exactly representable in their type: every operation rounds its result
 * back), bool as {@code i1}; in memory float16 is {@code half}, bfloat16 is {@code i16} (the upper
 * half of a float32), bool is {@code i8}. Also the spelling of constants and of the type suffixes
 * of overloaded intrinsics.
 */
final class IrTypes {
    private IrTypes() {}

    /** The register type of a scalar. */
    static String reg(DType t) {
        return switch (t) {
            case FLOAT16, BFLOAT16, FLOAT32 -> "float";
            case FLOAT64 -> "double";
            case INT8, UINT8 -> "i8";
            case INT16 -> "i16";
            case INT32 -> "i32";
            case INT64 -> "i64";
            case BOOL -> "i1";
        };
    }

    /** The type of an element in memory. */
    static String mem(DType t) {
        return switch (t) {
            case FLOAT16 -> "half";
            case BFLOAT16 -> "i16";
            case FLOAT32 -> "float";
            case FLOAT64 -> "double";
            case INT8, UINT8, BOOL -> "i8";
            case INT16 -> "i16";
            case INT32 -> "i32";
            case INT64 -> "i64";
        };
    }

    /** {@code elem} or {@code <lanes x elem>}. */
    static String vec(String elem, int lanes) {
        return lanes == 1 ? elem : "<" + lanes + " x " + elem + ">";
    }

    /** The type suffix of an overloaded intrinsic: f32, v16f32, i1, v8i64, f16, p0, v16p0. */
    static String mangle(String elem, int lanes) {
        String e =
                switch (elem) {
                    case "float" -> "f32";
                    case "double" -> "f64";
                    case "half" -> "f16";
                    case "ptr" -> "p0";
                    default -> elem; // iN
                };
        return lanes == 1 ? e : "v" + lanes + e;
    }

    /** An integer constant of type {@code t}, wrapped to the type and written signed. */
    static String intConst(DType t, long v) {
        if (t == DType.BOOL) return v != 0 ? "true" : "false";
        long w =
                switch (t) {
                    case INT8, UINT8 -> (byte) v;
                    case INT16 -> (short) v;
                    case INT32 -> (int) v;
                    default -> v;
                };
        return Long.toString(w);
    }

    /** A floating constant of type {@code t} (rounded to it), as LLVM's exact hexadecimal form. */
    static String floatConst(DType t, double v) {
        double r = Numerics.roundFloat(t, v);
        if (t != DType.FLOAT64) r = (float) r;
        return doubleHex(r);
    }

    /** A {@code double} (or a float widened to double) as LLVM's 0x... literal. */
    static String doubleHex(double r) {
        return String.format("0x%016X", Double.doubleToRawLongBits(r));
    }

    /** Whether an operand is a literal constant (not an SSA value or a global). */
    static boolean isLiteral(String ref) {
        return !ref.startsWith("%") && !ref.startsWith("@");
    }
}
