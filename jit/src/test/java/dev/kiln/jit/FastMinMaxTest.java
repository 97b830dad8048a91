package dev.kiln.jit;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.i32;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Float min and max with FMA contraction on (a fast-math target's code): they carry {@code nsz}, so either zero may
 * come back for -0 and +0, and they still propagate NaN and agree with {@link Math#max} everywhere else; a row maximum
 * (a reduction LLVM vectorises into a tree) still comes back NaN for a row that holds one. Without contraction the
 * calls carry no flag and keep the interpreter's order of zeros, bit for bit.
 */
class FastMinMaxTest {
    private static final int N = 4096, ROW = 128;

    @ParameterizedTest
    @EnumSource(
            value = ForKind.class,
            names = {"SERIAL", "VECTORIZED"})
    void minAndMaxPropagateNanAndMayOnlySwapZerosWithContraction(ForKind kind) {
        Var i = new Var("i"), r = new Var("r"), k = new Var("k");
        Buffer a = buf("a", DType.FLOAT32, N), b = buf("b", DType.FLOAT32, N);
        Buffer mx = buf("mx", DType.FLOAT32, N), mn = buf("mn", DType.FLOAT32, N);
        Buffer rowMax = buf("row_max", DType.FLOAT32, N / ROW);
        Expr at = r.mul(i32(ROW)).add(k);
        var elementwise = loop(
                i,
                N,
                kind,
                Seq.of(
                        store(mx, load(a, i).max(load(b, i)), i),
                        store(mn, load(a, i).min(load(b, i)), i)));
        var rows = loop(
                r,
                N / ROW,
                ForKind.SERIAL,
                Seq.of(
                        store(rowMax, dev.kiln.ir.Literals.like(load(a, i32(0)), Double.NEGATIVE_INFINITY), r),
                        loop(
                                k,
                                ROW,
                                ForKind.SERIAL,
                                store(rowMax, load(rowMax, r).max(load(a, at)), r))));
        PrimFunc fn = new PrimFunc(
                "fast_min_max_" + kind.displayName(), List.of(a, b, mx, mn, rowMax), Seq.of(elementwise, rows));
        float[] x = values(1), y = values(2);
        x[5 * ROW + 17] = Float.NaN; // row 5's maximum is NaN
        for (boolean contract : new boolean[] {true, false}) {
            try (LlvmKernel kern = JitCheck.BACKEND.compile(
                            fn, JitCheck.TARGET, JitOptions.defaults().withFpContract(contract));
                    NDArray na = NDArray.allocate(a);
                    NDArray nb = NDArray.allocate(b);
                    NDArray nmx = NDArray.allocate(mx);
                    NDArray nmn = NDArray.allocate(mn);
                    NDArray nrow = NDArray.allocate(rowMax)) {
                for (int j = 0; j < N; j++) {
                    na.setDoubleFlat(x[j], j);
                    nb.setDoubleFlat(y[j], j);
                }
                kern.call(na, nb, nmx, nmn, nrow);
                assertThat(kern.generatedIr().contains("call nsz"))
                        .as("nsz on min/max")
                        .isEqualTo(contract);
                for (int j = 0; j < N; j++) {
                    check(contract, "max", x[j], y[j], Math.max(x[j], y[j]), (float) nmx.getDoubleFlat(j));
                    check(contract, "min", x[j], y[j], Math.min(x[j], y[j]), (float) nmn.getDoubleFlat(j));
                }
                for (int row = 0; row < N / ROW; row++) {
                    float want = Float.NEGATIVE_INFINITY;
                    for (int j = 0; j < ROW; j++) want = Math.max(want, x[row * ROW + j]);
                    float have = (float) nrow.getDoubleFlat(row);
                    if (Float.isNaN(want)) assertThat(have).as("row %d", row).isNaN();
                    else if (want == 0f) assertThat(have).as("row %d", row).isZero();
                    else assertThat(have).as("row %d", row).isEqualTo(want);
                }
            }
        }
    }

    private static void check(boolean contract, String op, float x, float y, float want, float have) {
        String what = op + "(" + x + ", " + y + ")";
        if (Float.isNaN(want)) {
            assertThat(have).as(what).isNaN();
        } else if (want == 0f && contract) {
            assertThat(have).as(what).isZero(); // either zero
        } else {
            assertThat(Float.floatToRawIntBits(have)).as(what).isEqualTo(Float.floatToRawIntBits(want));
        }
    }

    /**
     * Seeded values with the special ones (signed zeros, NaN, infinities) spread through the first half, so the rows of
     * the second half have finite maxima.
     */
    private static float[] values(int seed) {
        Random r = new Random(seed);
        float[] special = {0f, -0f, Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 1f, -1f};
        float[] v = new float[N];
        for (int j = 0; j < N; j++) {
            v[j] = j % 11 == 0 && j < N / 2 && j / ROW != 3
                    ? special[r.nextInt(special.length)]
                    : (float) r.nextGaussian();
        }
        // row 3 has no NaN: zeros of both signs only, so its maximum is a zero of either sign
        for (int j = 3 * ROW; j < 4 * ROW; j++) v[j] = j % 2 == 0 ? -0f : 0f;
        return v;
    }
}
