package dev.kiln.jit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Literals;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.Te;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link NarrowCasts}' two rules (one clamp for a cast of a clamped float; no float -> int -> 8-bit -> int -> float
 * round trip) give the interpreter's values bit for bit, signed zeros included, on NaN, infinities, zeros of both
 * signs, halves and values outside every range, in scalar and vector code; where a rule's conditions fail (a lower
 * bound above 0, a value that may be -0) the plain casts run and still match. And the rules do apply: the clamp's
 * own {@code llvm.maximum} / {@code llvm.minimum} and the round trip's conversions are gone from the IR.
 */
class NarrowCastsTest {
    private static final int N = 160;
    private static final float[] SPECIAL = {
        Float.NaN,
        Float.POSITIVE_INFINITY,
        Float.NEGATIVE_INFINITY,
        0f,
        -0f,
        0.5f,
        -0.5f,
        1.5f,
        2.5f,
        -2.5f,
        -0.4f,
        127.5f,
        128f,
        -128.5f,
        -129f,
        254.5f,
        255.5f,
        256f,
        300f,
        -300f,
        1e10f,
        -1e10f,
        1e-40f,
        -1e-40f,
        3.4e38f,
        0x1.fffffep22f,
        -0x1.fffffep22f,
        8388609f,
    };

    /** in0, in1: float32 (specials, then halves and random values); in2: uint8 zero points; in3: int8. */
    private static List<NDArray> inputs(PrimFunc f, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        List<NDArray> args = new ArrayList<>();
        for (int p = 0; p < f.params().size(); p++)
            args.add(NDArray.allocate(f.params().get(p)));
        for (int i = 0; i < N; i++) {
            for (int p = 0; p < 2; p++) {
                float v = p == 0 && i < SPECIAL.length
                        ? SPECIAL[i]
                        : r.nextInt(4) == 0 ? r.nextInt(-600, 600) / 2f : (float) r.nextDouble(-400, 400);
                args.get(p).setDouble(v, i);
            }
            args.get(2).setLong(i % 7 == 0 ? 0 : r.nextInt(256), i);
            args.get(3).setLong(i % 5 == 0 ? 0 : r.nextInt(-128, 128), i);
        }
        return args;
    }

    private static Expr clamp(Expr x, double lo, double hi) {
        return x.max(Literals.like(x, lo)).min(Literals.like(x, hi));
    }

    /** {@code round(x * s) + float32(zero)}: integer-valued, never -0 (the rules' second condition). */
    private static Expr quantized(Expr x, Expr zero) {
        return Te.round(x.mul(Literals.like(x, 0.37))).add(zero.cast(DType.FLOAT32));
    }

    private static Expr roundTrip(Expr q, DType narrow, double lo, double hi) {
        return clamp(q, lo, hi).cast(narrow).cast(DType.INT32);
    }

    private static final List<Function<List<Expr>, Expr>> OPS = List.of(
            in -> clamp(quantized(in.get(0), in.get(2)), 0, 255).cast(DType.UINT8),
            in -> clamp(Te.round(in.get(0)), -128, 127).cast(DType.INT8),
            in -> in.get(0)
                    .min(Literals.like(in.get(0), 200.0))
                    .max(Literals.like(in.get(0), 0.0))
                    .cast(DType.UINT8),
            in -> clamp(in.get(0), -5, 100).cast(DType.INT8),
            in -> clamp(in.get(0), 3, 250).cast(DType.UINT8), // lower bound above 0: the plain casts
            in -> clamp(in.get(0), -40000, 40000).cast(DType.INT16), // wider than int16: the plain casts
            in -> roundTrip(quantized(in.get(0), in.get(2)), DType.UINT8, 0, 255)
                    .sub(in.get(2).cast(DType.INT32))
                    .cast(DType.FLOAT32),
            in -> roundTrip(quantized(in.get(0), in.get(2)), DType.UINT8, 0, 255)
                    .add(in.get(3).cast(DType.INT32))
                    .cast(DType.FLOAT32),
            in -> roundTrip(quantized(in.get(0), in.get(3)), DType.INT8, -128, 127)
                    .sub(in.get(3).cast(DType.INT32))
                    .cast(DType.FLOAT32),
            in -> roundTrip(quantized(in.get(0), in.get(2)), DType.UINT8, 0, 255)
                    .cast(DType.FLOAT64),
            in -> in.get(2)
                    .cast(DType.INT32)
                    .sub(roundTrip(quantized(in.get(1), in.get(2)), DType.UINT8, 0, 255))
                    .cast(DType.FLOAT32),
            in -> roundTrip(quantized(in.get(0), in.get(2)), DType.UINT8, 0, 255)
                    .sub(roundTrip(quantized(in.get(1), in.get(3)), DType.INT8, -128, 127))
                    .cast(DType.FLOAT32),
            // may be -0 (a bare rounding): the plain casts, whose zero is +0
            in -> roundTrip(Te.round(in.get(0)), DType.UINT8, 0, 255)
                    .sub(in.get(2).cast(DType.INT32))
                    .cast(DType.FLOAT32),
            in -> roundTrip(Te.round(in.get(0)), DType.INT8, -128, 127)
                    .sub(in.get(3).cast(DType.INT32))
                    .cast(DType.FLOAT32),
            // clamped to non-integers: truncation matters, the plain casts
            in -> roundTrip(quantized(in.get(0), in.get(2)), DType.UINT8, 0, 100.5)
                    .sub(in.get(2).cast(DType.INT32))
                    .cast(DType.FLOAT32));

    private static final List<DType> INPUTS = List.of(DType.FLOAT32, DType.FLOAT32, DType.UINT8, DType.INT8);

    @ParameterizedTest
    @EnumSource(
            value = ForKind.class,
            names = {"SERIAL", "VECTORIZED"})
    void everyFormMatchesTheInterpreterBitForBit(ForKind kind) {
        PrimFunc f = Funcs.elementwise("narrow_" + kind.displayName(), kind, N, INPUTS, OPS);
        for (long seed = 1; seed <= 3; seed++) {
            List<NDArray> expected = inputs(f, seed), actual = inputs(f, seed);
            try (LlvmKernel k = JitCheck.BACKEND.compile(f, JitCheck.TARGET, JitOptions.defaults())) {
                Interpreter.run(f, expected.toArray(NDArray[]::new));
                k.call(actual.toArray(NDArray[]::new));
                for (int p = INPUTS.size(); p < f.params().size(); p++) {
                    for (int i = 0; i < N; i++) {
                        double e = expected.get(p).getDouble(i),
                                a = actual.get(p).getDouble(i);
                        assertThat(Double.doubleToRawLongBits(a))
                                .as(
                                        "output %d, element %d (input %s): %s against %s",
                                        p - INPUTS.size(), i, expected.get(0).getDouble(i), a, e)
                                .isEqualTo(Double.doubleToRawLongBits(e));
                    }
                }
            } finally {
                expected.forEach(NDArray::close);
                actual.forEach(NDArray::close);
            }
        }
    }

    @Test
    void theClampAndTheRoundTripAreGoneFromTheCode() {
        String clampOnce = ir(OPS.get(0));
        assertThat(clampOnce).doesNotContain("llvm.maximum").doesNotContain("llvm.minimum");
        String noTrip = ir(OPS.get(6));
        assertThat(noTrip)
                .doesNotContain("fptosi")
                .doesNotContain("sitofp <16 x i32>")
                .contains("fsub");
        String plain = ir(OPS.get(12));
        assertThat(plain).contains("fptosi");
    }

    private static String ir(Function<List<Expr>, Expr> op) {
        PrimFunc f = Funcs.elementwise("narrow_ir", ForKind.VECTORIZED, N, INPUTS, List.of(op));
        try (LlvmKernel k = JitCheck.BACKEND.compile(f, JitCheck.TARGET, JitOptions.defaults())) {
            return k.generatedIr();
        }
    }
}
