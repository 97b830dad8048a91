package dev.kiln.cuda.codegen;

import static dev.kiln.cuda.codegen.CudaTypes.fromDouble;
import static dev.kiln.cuda.codegen.CudaTypes.fromFloat;
import static dev.kiln.cuda.codegen.CudaTypes.isHalfLike;
import static dev.kiln.cuda.codegen.CudaTypes.name;
import static dev.kiln.cuda.codegen.CudaTypes.toFloat;

import dev.kiln.ir.DType;
import dev.kiln.ir.FloatImm;

/**
 * CUDA C for {@link dev.kiln.ir.Cast} with its semantics: float to integer truncates toward zero
 * and saturates (NaN gives 0) through {@link Helper#FLOAT_TO_INT}; integer to narrower integer
 * wraps (C's conversion, modular on CUDA); anything to bool is {@code x != 0}; bool to a number is
 * 0 or 1; every conversion to a float type rounds once to nearest even.
 */
final class CastGen {
    private CastGen() {}

    static String cast(ExprGen g, DType from, DType to, String x) {
        if (from == to) return x;
        if (to == DType.BOOL) return "(" + (isHalfLike(from) ? toFloat(from, x) : x) + " != 0)";
        if (from == DType.BOOL) {
            if (isHalfLike(to))
                return "(" + x + " ? " + CudaTypes.literal(new FloatImm(to, 1)) + " : " + CudaTypes.zero(to) + ")";
            return "((" + name(to) + ")(" + x + " ? 1 : 0))";
        }
        if (from.isInt() && to.isInt()) return "((" + name(to) + ")" + x + ")";
        if (from.isInt()) { // to a float: one rounding
            if (!isHalfLike(to)) return "((" + name(to) + ")" + x + ")";
            if (from == DType.INT64) return (to == DType.FLOAT16 ? "__ll2half_rn(" : "__ll2bfloat16_rn(") + x + ")";
            return fromDouble(to, "(double)" + x); // exact in double, then one rounding
        }
        if (to.isInt()) {
            g.use(Helper.FLOAT_TO_INT);
            String fn =
                    switch (to) {
                        case INT8 -> "kiln_f2i8";
                        case INT16 -> "kiln_f2i16";
                        case INT32 -> "kiln_f2i32";
                        case INT64 -> "kiln_f2i64";
                        case UINT8 -> "kiln_f2u8";
                        case BOOL, FLOAT16, BFLOAT16, FLOAT32, FLOAT64 -> throw new IllegalStateException("to " + to);
                    };
            return fn + "(" + ExprGen.toDouble(from, x) + ")";
        }
        // float to float
        if (isHalfLike(from)) {
            String f = toFloat(from, x);
            return switch (to) {
                case FLOAT32 -> f;
                case FLOAT64 -> "(double)" + f;
                case FLOAT16, BFLOAT16 -> fromFloat(to, f);
                case INT8, INT16, INT32, INT64, UINT8, BOOL -> throw new IllegalStateException("to " + to);
            };
        }
        if (isHalfLike(to)) return from == DType.FLOAT32 ? fromFloat(to, x) : fromDouble(to, x);
        return "((" + name(to) + ")" + x + ")";
    }
}
