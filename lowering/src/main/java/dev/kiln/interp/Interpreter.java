package dev.kiln.interp;

import dev.kiln.runtime.NDArray;
import dev.kiln.tir.PrimFunc;

/**
 * The reference interpreter: runs any lowered {@link PrimFunc} on {@link NDArray}s. It defines what
 * "correct" means for every backend, so its semantics are exact and listed here.
 *
 * <h2>Values</h2>
 * Every value has the dtype of its expression and is rounded to that dtype after every operation:
 * <ul>
 *   <li>Floats are computed in float64 and rounded once to the type (float32 by a {@code (float)}
 *       cast; float16 and bfloat16 to nearest even with their subnormals and overflow to
 *       infinity). For {@code + - * /} and sqrt this equals native arithmetic in that type.
 *       Constants are rounded to their type when compiled.</li>
 *   <li>Integers wrap to their width (two's complement; int8 -128 - 1 is 127, uint8 is 0..255);
 *       bool is 0 or 1.</li>
 *   <li>{@code floordiv}/{@code floormod} round toward negative infinity (the remainder has the
 *       sign of the divisor); {@code truncdiv}/{@code truncmod} round toward zero (the remainder
 *       has the sign of the dividend). Division by zero throws a {@link dev.kiln.ir.KilnException}
 *       naming the expression and the function. The one overflowing quotient, MIN / -1, wraps to
 *       MIN.</li>
 *   <li>{@code min}/{@code max} on floats return NaN if either operand is NaN and order -0 below
 *       +0 (Java's {@code Math.min/max}). Comparisons on floats are IEEE: with NaN, all are false
 *       except {@code !=}.</li>
 *   <li>Casts follow {@link dev.kiln.ir.Cast}: float to integer truncates toward zero and saturates
 *       at the target's range, NaN gives 0; integer to narrower integer wraps; anything to bool is
 *       {@code x != 0} (NaN gives true); bool to a number is 0 or 1; to a float rounds once.</li>
 *   <li>Intrinsics are computed in float64 with {@link Math} (erf with commons-math3) and rounded:
 *       exp, log, sqrt, {@code rsqrt = 1/sqrt(x)}, tanh, {@code sigmoid = 1/(1+exp(-x))}, erf, pow,
 *       floor, ceil, {@code round} = half to even ({@code Math.rint}), abs (integers too, wrapping:
 *       abs(int8 -128) is -128), and {@code fma} with one rounding ({@code Math.fma} on float32
 *       and float64; for float16/bfloat16 the float64 fma rounded to the type).</li>
 *   <li>{@code select} evaluates only the chosen branch; {@code &&} and {@code ||}
 *       short-circuit.</li>
 * </ul>
 *
 * <h2>Statements</h2>
 * <ul>
 *   <li>Loops of every kind (serial, parallel, vectorized, unrolled and thread-bound) run serially,
 *       in order, with {@code var = min + k} for {@code k} in {@code [0, extent)}. Thread-bound
 *       loops (blockIdx/threadIdx) therefore run one thread after another, so a GPU schedule can
 *       be checked on a CPU; a program that is only correct with concurrent threads (one thread
 *       waiting for another) is outside what this interpreter models.</li>
 *   <li>Every load and store is bounds-checked per dimension against the buffer's shape; an
 *       out-of-bounds access throws a {@link dev.kiln.ir.KilnException} naming the buffer, the
 *       index values and the dimension. The interpreter is the safety net for testing schedules.</li>
 *   <li>{@code Allocate} gives zero-filled scratch memory for its body (cleared again on every
 *       entry); {@code Let} binds a variable for its body; {@code Evaluate} evaluates its
 *       expression and discards the value.</li>
 *   <li>A {@code TensorRead} or {@code Reduce} left in the function is an error: lower it first.</li>
 * </ul>
 *
 * <h2>Arguments</h2>
 * One {@link NDArray} per parameter (inputs, then outputs), each with the parameter's dtype, shape
 * and strides; these are checked before anything runs. Parameters must have constant shapes and
 * strides.
 *
 * <h2>Speed</h2>
 * {@link #compile} turns the IR into a tree of closures specialised by type once (variables in
 * frame slots, affine indices folded, strides precomputed), so the hot path has no maps, no boxing
 * and no dispatch on IR records; a compiled {@link Program} can be run many times.
 */
public final class Interpreter {
    private Interpreter() {}

    /** Compiles {@code f} for repeated runs. */
    public static Program compile(PrimFunc f) {
        if (f == null) throw new dev.kiln.ir.KilnException("Interpreter: the function is null");
        return Compiler.compile(f);
    }

    /** Compiles and runs {@code f} once on {@code args} (inputs, then outputs). */
    public static void run(PrimFunc f, NDArray... args) {
        compile(f).run(args);
    }
}
