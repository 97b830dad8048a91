package dev.kiln.jit;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.i32;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.Call;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Intrinsic;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.DoubleUnaryOperator;
import org.apache.commons.math3.special.Erf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The float32 {@code exp}, {@code erf}, {@code tanh} and {@code sigmoid} that {@link FastMath} writes
 * as vector IR, against the double-precision result rounded to float, on half a million points:
 * uniform over each function's whole interesting range, dense near 0 and near the switch points of
 * the piecewise forms, plus the special values (signed zeros, infinities, NaN, subnormals).
 * The error is counted in units in the last place of the float result (with the smallest
 * subnormal as the unit below the normal range).
 */
class FastMathTest {
    private static final int N = 1 << 19;

    /** Ulp bounds: FastMath's documentation states the errors seen (1, 2, 1, 2); one ulp of slack each. */
    private static final double EXP_ULP = 2, ERF_ULP = 3, TANH_ULP = 2, SIGMOID_ULP = 3;

    @ParameterizedTest
    @EnumSource(
            value = ForKind.class,
            names = {"SERIAL", "VECTORIZED"})
    void floatTranscendentalsStayWithinTheirUlpBounds(ForKind kind) {
        Var i = new Var("i");
        Buffer x = buf("x", DType.FLOAT32, N);
        List<Buffer> outs = new ArrayList<>();
        List<dev.kiln.tir.Stmt> body = new ArrayList<>();
        for (Intrinsic f : List.of(Intrinsic.EXP, Intrinsic.ERF, Intrinsic.TANH, Intrinsic.SIGMOID)) {
            Buffer o = buf(f.name().toLowerCase(java.util.Locale.ROOT), DType.FLOAT32, N);
            outs.add(o);
            body.add(store(o, new Call(f, List.<Expr>of(load(x, i))), i));
        }
        List<Buffer> params = new ArrayList<>(List.of(x));
        params.addAll(outs);
        PrimFunc fn = new PrimFunc("fast_math_" + kind.displayName(), params, loop(i, N, kind, Seq.of(body)));
        float[] in = inputs();
        List<NDArray> args = new ArrayList<>();
        try (LlvmKernel k = JitCheck.BACKEND.compile(fn, JitCheck.TARGET, JitOptions.defaults())) {
            for (Buffer b : params) args.add(NDArray.allocate(b));
            for (int j = 0; j < N; j++) args.get(0).setDoubleFlat(in[j], j);
            k.call(args.toArray(NDArray[]::new));
            // no libm call per lane: the functions are written inline (LLVM would scalarise llvm.exp.v16f32)
            assertThat(k.generatedIr()).doesNotContain("@erff", "@expf", "llvm.exp.", "llvm.tanh.");
            check("exp", in, args.get(1), Math::exp, EXP_ULP);
            check("erf", in, args.get(2), Erf::erf, ERF_ULP);
            check("tanh", in, args.get(3), Math::tanh, TANH_ULP);
            check("sigmoid", in, args.get(4), v -> 1 / (1 + Math.exp(-v)), SIGMOID_ULP);
        } finally {
            for (NDArray a : args) a.close();
        }
    }

    /**
     * exp inside vector loops of widths that are not one zmm: on an AVX-512 target the scale by 2^n is {@code
     * vscalefps} on zmm-sized pieces of the vector (the last padded), put back together; the values must not depend on
     * how the lanes were cut.
     */
    @ParameterizedTest
    @ValueSource(ints = {4, 8, 24, 48, 64})
    void expInVectorLoopsOfEveryWidthStaysWithinItsUlpBound(int lanes) {
        Var o = new Var("o"), l = new Var("l");
        int n = N / lanes * lanes;
        Buffer x = buf("x", DType.FLOAT32, n);
        Buffer y = buf("y", DType.FLOAT32, n);
        Expr at = o.mul(i32(lanes)).add(l);
        var inner =
                loop(l, lanes, ForKind.VECTORIZED, store(y, new Call(Intrinsic.EXP, List.<Expr>of(load(x, at))), at));
        PrimFunc fn = new PrimFunc("exp_lanes_" + lanes, List.of(x, y), loop(o, n / lanes, ForKind.SERIAL, inner));
        float[] in = java.util.Arrays.copyOf(inputs(), n);
        try (LlvmKernel k = JitCheck.BACKEND.compile(fn, JitCheck.TARGET, JitOptions.defaults());
                NDArray a = NDArray.allocate(x);
                NDArray b = NDArray.allocate(y)) {
            for (int j = 0; j < n; j++) a.setDoubleFlat(in[j], j);
            k.call(a, b);
            check("exp, " + lanes + " lanes", in, b, Math::exp, EXP_ULP);
            boolean scalef = k.generatedIr().contains("llvm.x86.avx512.mask.scalef.ps.512");
            assertThat(scalef).as("vscalefps used").isEqualTo(JitCheck.TARGET.hasFeature("avx512f"));
        }
    }

    private static void check(String name, float[] in, NDArray got, DoubleUnaryOperator ref, double bound) {
        double worst = 0;
        int at = -1;
        for (int j = 0; j < in.length; j++) {
            float want = (float) ref.applyAsDouble(in[j]);
            float have = (float) got.getDoubleFlat(j);
            if (Float.isNaN(want)) {
                assertThat(have).as("%s(%s)", name, in[j]).isNaN();
                continue;
            }
            if (Float.isInfinite(want) || Float.isInfinite(have)) {
                assertThat(have).as("%s(%s)", name, in[j]).isEqualTo(want);
                continue;
            }
            double err = Math.abs((double) have - want) / Math.max(Math.ulp(want), Float.MIN_VALUE);
            if (err > worst) {
                worst = err;
                at = j;
            }
        }
        System.out.printf("FastMath %s: max error %.2f ulp at x = %s%n", name, worst, at < 0 ? "-" : in[at]);
        assertThat(worst)
                .as("%s: max error %.2f ulp at x = %s", name, worst, at < 0 ? "-" : in[at])
                .isLessThanOrEqualTo(bound);
    }

    /** The points: wide ranges, dense ranges near 0 and the switch points, and the special values. */
    private static float[] inputs() {
        Random r = new Random(20261202);
        float[] special = {
            0f,
            -0f,
            Float.NaN,
            Float.POSITIVE_INFINITY,
            Float.NEGATIVE_INFINITY,
            Float.MIN_VALUE,
            -Float.MIN_VALUE,
            Float.MIN_NORMAL,
            88.72f,
            88.73f,
            -87.3f,
            -103.9f,
            -104f,
            0.5f,
            0.55f,
            -0.55f,
            1f,
            -1f,
            0.25f
        };
        float[] in = new float[N];
        System.arraycopy(special, 0, in, 0, special.length);
        double[][] ranges = {{-105, 90}, {-10, 10}, {-1.2, 1.2}, {-1e-3, 1e-3}, {0.5, 0.6}, {0.9, 1.1}, {3, 6}};
        for (int j = special.length; j < N; j++) {
            double[] range = ranges[j % ranges.length];
            in[j] = (float) (range[0] + (range[1] - range[0]) * r.nextDouble());
        }
        return in;
    }
}
