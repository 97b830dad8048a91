package dev.kiln.jit;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.Call;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.Intrinsic;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CpuTarget;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link Intrinsic#EXACT_DIV} on a fast-math target: a plain divide there carries {@code arcp}, so LLVM may multiply
 * by the reciprocal (a bit off), which quantisation cannot have (ONNX's {@code round(x / scale)} flips at a half:
 * {@code FastMathQuantTuneTest} in autoschedule shows the tuned case); the intrinsic stays the correctly rounded
 * divide, bit for bit Java's float division, scalar and vectorized, by a constant and by a value.
 */
class ExactDivTest {
    private static final int N = 1 << 16;

    @ParameterizedTest
    @EnumSource(
            value = ForKind.class,
            names = {"SERIAL", "VECTORIZED"})
    void exactDivideIsCorrectlyRoundedOnAFastMathTarget(ForKind kind) {
        Var i = new Var("i");
        Buffer x = buf("x", DType.FLOAT32, N), y = buf("y", DType.FLOAT32, N);
        Buffer plain = buf("plain", DType.FLOAT32, N), exact = buf("exact", DType.FLOAT32, N);
        Buffer byValue = buf("by_value", DType.FLOAT32, N);
        Expr c = FloatImm.f32(255.0);
        PrimFunc fn = new PrimFunc(
                "exact_div_" + kind.displayName(),
                List.of(x, y, plain, exact, byValue),
                loop(
                        i,
                        N,
                        kind,
                        Seq.of(List.of(
                                store(plain, new Binary(BinaryOp.DIV, load(x, i), c), i),
                                store(exact, new Call(Intrinsic.EXACT_DIV, List.of(load(x, i), c)), i),
                                store(byValue, new Call(Intrinsic.EXACT_DIV, List.of(load(x, i), load(y, i))), i)))));
        CpuTarget fast = JitCheck.TARGET.withFastMath(true);
        Random r = new Random(20261206);
        float[] xs = new float[N], ys = new float[N];
        for (int j = 0; j < N; j++) {
            xs[j] = (float) (r.nextDouble() * 200 - 100);
            ys[j] = (float) (r.nextDouble() * 4 + 0.01);
        }
        try (LlvmKernel k = JitCheck.BACKEND.compile(fn, fast);
                NDArray a = NDArray.allocate(x);
                NDArray b = NDArray.allocate(y);
                NDArray p = NDArray.allocate(plain);
                NDArray e = NDArray.allocate(exact);
                NDArray v = NDArray.allocate(byValue)) {
            for (int j = 0; j < N; j++) {
                a.setDoubleFlat(xs[j], j);
                b.setDoubleFlat(ys[j], j);
            }
            k.call(a, b, p, e, v);
            for (int j = 0; j < N; j++) {
                assertThat((float) e.getDoubleFlat(j))
                        .as("exact %s / 255", xs[j])
                        .isEqualTo(xs[j] / 255f);
                assertThat((float) v.getDoubleFlat(j))
                        .as("exact %s / %s", xs[j], ys[j])
                        .isEqualTo(xs[j] / ys[j]);
            }
            // the plain divide carries the fast target's arcp (free to become a reciprocal multiply), the intrinsic not
            List<String> divides =
                    k.generatedIr().lines().filter(l -> l.contains(" fdiv ")).toList();
            assertThat(divides).anyMatch(l -> l.contains("fdiv arcp"));
            assertThat(divides.stream().filter(l -> !l.contains("arcp"))).hasSizeGreaterThanOrEqualTo(2);
        }
    }
}
