package dev.kiln.cuda.codegen;

import static dev.kiln.cuda.codegen.CudaTypes.fromFloat;
import static dev.kiln.cuda.codegen.CudaTypes.toFloat;

import dev.kiln.ir.DType;
import dev.kiln.ir.Intrinsic;
import java.util.List;

/**
 * CUDA C for the math intrinsics. The exact forms follow the interpreter, which computes in
 * double and rounds once to the type: transcendental functions of float and 16-bit types go
 * through double; sqrt, floor, ceil, round, abs and fma are correctly rounded in float already.
 * The fast forms (fast math) use CUDA's single-precision intrinsics.
 */
final class MathGen {
    private MathGen() {}

    /** float32, fast math. */
    static String fastFloat(Intrinsic fn, List<String> a) {
        String x = a.getFirst();
        return switch (fn) {
            case EXP -> "__expf(" + x + ")";
            case LOG -> "__logf(" + x + ")";
            case SQRT -> "sqrtf(" + x + ")";
            case RSQRT -> "rsqrtf(" + x + ")";
            case TANH -> "tanhf(" + x + ")";
            case SIGMOID -> "(1.0f / (1.0f + __expf(-" + x + ")))";
            case ERF -> "erff(" + x + ")";
            case POW -> "__powf(" + x + ", " + a.get(1) + ")";
            case EXACT_DIV -> "__fdiv_rn(" + x + ", " + a.get(1) + ")";
            case ABS -> "fabsf(" + x + ")";
            case FLOOR -> "floorf(" + x + ")";
            case CEIL -> "ceilf(" + x + ")";
            case ROUND -> "rintf(" + x + ")";
            case FMA -> "fmaf(" + x + ", " + a.get(1) + ", " + a.get(2) + ")";
        };
    }

    /** float32 with the interpreter's rounding. */
    static String exactFloat(Intrinsic fn, List<String> a) {
        String x = a.getFirst();
        return switch (fn) {
            case SQRT -> "__fsqrt_rn(" + x + ")";
            case ABS -> "fabsf(" + x + ")";
            case FLOOR -> "floorf(" + x + ")";
            case CEIL -> "ceilf(" + x + ")";
            case ROUND -> "rintf(" + x + ")";
            case FMA -> "fmaf(" + x + ", " + a.get(1) + ", " + a.get(2) + ")";
            case EXACT_DIV -> "__fdiv_rn(" + x + ", " + a.get(1) + ")";
            case EXP, LOG, RSQRT, TANH, SIGMOID, ERF, POW ->
                "(float)(" + double_(fn, a.stream().map(s -> "(double)" + s).toList()) + ")";
        };
    }

    /** float64 (always exact). */
    static String double_(Intrinsic fn, List<String> a) {
        String x = a.getFirst();
        return switch (fn) {
            case EXP -> "exp(" + x + ")";
            case LOG -> "log(" + x + ")";
            case SQRT -> "sqrt(" + x + ")";
            case RSQRT -> "(1.0 / sqrt(" + x + "))";
            case TANH -> "tanh(" + x + ")";
            case SIGMOID -> "(1.0 / (1.0 + exp(-" + x + ")))";
            case ERF -> "erf(" + x + ")";
            case POW -> "pow(" + x + ", " + a.get(1) + ")";
            case EXACT_DIV -> "__ddiv_rn(" + x + ", " + a.get(1) + ")";
            case ABS -> "fabs(" + x + ")";
            case FLOOR -> "floor(" + x + ")";
            case CEIL -> "ceil(" + x + ")";
            case ROUND -> "rint(" + x + ")";
            case FMA -> "fma(" + x + ", " + a.get(1) + ", " + a.get(2) + ")";
        };
    }

    /**
     * float16 and bfloat16: exact operations in float, rounded back; the rest in double (or, with
     * fast math, with the float intrinsics), rounded back once.
     */
    static String half(Intrinsic fn, DType t, List<String> a, boolean fastMath) {
        List<String> f = a.stream().map(s -> toFloat(t, s)).toList();
        return switch (fn) {
            case SQRT, ABS, FLOOR, CEIL, ROUND, EXACT_DIV -> fromFloat(t, exactFloat(fn, f));
            case EXP, LOG, RSQRT, TANH, SIGMOID, ERF, POW, FMA ->
                fastMath
                        ? fromFloat(t, fastFloat(fn, f))
                        : ExprGen.fromDoubleTo(
                                t,
                                double_(
                                        fn,
                                        a.stream()
                                                .map(s -> ExprGen.toDouble(t, s))
                                                .toList()));
        };
    }
}
