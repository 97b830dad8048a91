package dev.kiln.cuda.codegen;

import dev.kiln.ir.DType;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.runtime.Numerics;

/**
 * Kiln's data types as CUDA C types, and constants as CUDA C literals that denote exactly the
 * value the interpreter uses (a float constant rounded once to its type, a 16-bit float written
 * as its bits).
 */
final class CudaTypes {
    private CudaTypes() {}

    /** The CUDA C type of a dtype: {@code __half} (cuda_fp16.h), {@code __nv_bfloat16} (cuda_bf16.h), ... */
    static String name(DType t) {
        return switch (t) {
            case FLOAT16 -> "__half";
            case BFLOAT16 -> "__nv_bfloat16";
            case FLOAT32 -> "float";
            case FLOAT64 -> "double";
            case INT8 -> "signed char";
            case INT16 -> "short";
            case INT32 -> "int";
            case INT64 -> "long long";
            case UINT8 -> "unsigned char";
            case BOOL -> "bool";
        };
    }

    /** float16 or bfloat16: computed in float and rounded back after every operation. */
    static boolean isHalfLike(DType t) {
        return t == DType.FLOAT16 || t == DType.BFLOAT16;
    }

    /** Integer types narrower than int, which C promotes to int before arithmetic. */
    static boolean isNarrowInt(DType t) {
        return t == DType.INT8 || t == DType.INT16 || t == DType.UINT8;
    }

    /** {@code x} of a 16-bit float type, as a float (exact). */
    static String toFloat(DType t, String x) {
        return (t == DType.FLOAT16 ? "__half2float(" : "__bfloat162float(") + x + ")";
    }

    /** A float value rounded to a 16-bit float type (nearest even). */
    static String fromFloat(DType t, String x) {
        return (t == DType.FLOAT16 ? "__float2half_rn(" : "__float2bfloat16_rn(") + x + ")";
    }

    /** A double value rounded once to a 16-bit float type (nearest even). */
    static String fromDouble(DType t, String x) {
        return (t == DType.FLOAT16 ? "__double2half(" : "__double2bfloat16(") + x + ")";
    }

    /** An integer or bool constant. */
    static String literal(IntImm c) {
        long v = c.value();
        return switch (c.dtype()) {
            case BOOL -> v != 0 ? "true" : "false";
            case INT32 -> v == Integer.MIN_VALUE ? "(-2147483647 - 1)" : v < 0 ? "(" + v + ")" : Long.toString(v);
            case INT64 -> v == Long.MIN_VALUE ? "(-9223372036854775807LL - 1)" : v < 0 ? "(" + v + "LL)" : v + "LL";
            case INT8, INT16, UINT8 -> "((" + name(c.dtype()) + ")" + v + ")";
            case FLOAT16, BFLOAT16, FLOAT32, FLOAT64 ->
                throw new IllegalStateException("integer constant of type " + c.dtype());
        };
    }

    /** A float constant, rounded to its type as the interpreter does. */
    static String literal(FloatImm c) {
        double v = c.value();
        return switch (c.dtype()) {
            case FLOAT32 -> {
                float f = (float) v;
                if (Float.isNaN(f)) yield "__int_as_float(0x7fc00000)";
                if (Float.isInfinite(f)) yield f > 0 ? "__int_as_float(0x7f800000)" : "(-__int_as_float(0x7f800000))";
                String s = Float.toString(f) + "f";
                yield f < 0 || (f == 0 && 1 / f < 0) ? "(" + s + ")" : s;
            }
            case FLOAT64 -> {
                if (Double.isNaN(v)) yield "__longlong_as_double(0x7ff8000000000000LL)";
                if (Double.isInfinite(v)) {
                    yield v > 0
                            ? "__longlong_as_double(0x7ff0000000000000LL)"
                            : "(-__longlong_as_double(0x7ff0000000000000LL))";
                }
                String s = Double.toString(v);
                yield v < 0 || (v == 0 && 1 / v < 0) ? "(" + s + ")" : s;
            }
            case FLOAT16 ->
                String.format("__ushort_as_half((unsigned short)0x%04x)", Numerics.toFloat16Bits(v) & 0xFFFF);
            case BFLOAT16 ->
                String.format("__ushort_as_bfloat16((unsigned short)0x%04x)", Numerics.toBFloat16Bits(v) & 0xFFFF);
            case INT8, INT16, INT32, INT64, UINT8, BOOL ->
                throw new IllegalStateException("float constant of type " + c.dtype());
        };
    }

    /** Zero of a type, for clearing scratch memory. */
    static String zero(DType t) {
        return switch (t) {
            case FLOAT16, BFLOAT16 -> literal(new FloatImm(t, 0.0));
            case FLOAT32 -> "0.0f";
            case FLOAT64 -> "0.0";
            case BOOL -> "false";
            case INT8, INT16, INT32, INT64, UINT8 -> literal(new IntImm(t, 0));
        };
    }
}
