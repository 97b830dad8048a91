package dev.kiln.jit;

import static dev.kiln.jit.JitCheck.matches;
import static dev.kiln.jit.JitCheck.ulp;

import dev.kiln.ir.Call;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Intrinsic;
import dev.kiln.ir.Literals;
import dev.kiln.ir.Select;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every operator and intrinsic on every dtype, through the JIT and the interpreter on random
 * inputs, in a serial loop (scalar code) and a vectorized loop of 100 (a 64-lane chunk and a
 * 36-lane remainder). Exact operations must agree bit for bit; transcendental functions within a
 * few units in the last place (libm's float functions against double-then-round).
 */
class DTypeOpsTest {
    private static final int N = 100;

    private static Expr call(Intrinsic f, Expr... a) {
        return new Call(f, List.of(a));
    }

    /** Operations whose results are exact (equal bit for bit to the interpreter). */
    private static List<Function<List<Expr>, Expr>> exactOps(DType t) {
        List<Function<List<Expr>, Expr>> ops = new ArrayList<>();
        if (t.isBool()) {
            ops.add(x -> x.get(0).and(x.get(1)));
            ops.add(x -> x.get(0).or(x.get(1)));
            ops.add(x -> x.get(0).not());
            ops.add(x -> x.get(0).eq(x.get(1)));
            ops.add(x -> x.get(0).lt(x.get(1)));
            ops.add(x -> x.get(0).ge(x.get(1)));
            ops.add(x -> new Select(x.get(0), x.get(1), x.get(0).not()));
            return ops;
        }
        ops.add(x -> x.get(0).add(x.get(1)));
        ops.add(x -> x.get(0).sub(x.get(1)));
        ops.add(x -> x.get(0).mul(x.get(1)));
        ops.add(x -> x.get(0).min(x.get(1)));
        ops.add(x -> x.get(0).max(x.get(1)));
        ops.add(x -> x.get(0).eq(x.get(1)));
        ops.add(x -> x.get(0).ne(x.get(1)));
        ops.add(x -> x.get(0).lt(x.get(1)));
        ops.add(x -> x.get(0).le(x.get(1)));
        ops.add(x -> x.get(0).gt(x.get(1)));
        ops.add(x -> x.get(0).ge(x.get(1)));
        ops.add(x -> new Select(x.get(0).lt(x.get(1)), x.get(0), x.get(1).neg()));
        ops.add(x -> call(Intrinsic.ABS, x.get(0)));
        ops.add(x -> x.get(0).mul(x.get(0)).mul(x.get(0)).add(x.get(1).mul(Literals.like(x.get(1), 7L))));
        if (t.isFloat()) {
            ops.add(x -> x.get(0).div(x.get(1)));
            ops.add(x -> call(Intrinsic.SQRT, x.get(0)));
            ops.add(x -> call(Intrinsic.SQRT, call(Intrinsic.ABS, x.get(0))));
            ops.add(x -> call(Intrinsic.RSQRT, call(Intrinsic.ABS, x.get(0))));
            ops.add(x -> call(Intrinsic.FLOOR, x.get(0).mul(Literals.like(x.get(0), 9.5))));
            ops.add(x -> call(Intrinsic.CEIL, x.get(0).mul(Literals.like(x.get(0), 9.5))));
            ops.add(x -> call(Intrinsic.ROUND, x.get(0).mul(Literals.like(x.get(0), 4.0))));
            ops.add(x -> call(Intrinsic.FMA, x.get(0), x.get(1), x.get(0)));
            ops.add(x -> x.get(0).div(x.get(1).sub(x.get(1)))); // +-inf and NaN
        } else {
            Function<Expr, Expr> nonZero = b -> new Select(b.eq(0L), Literals.like(b, 3L), b);
            ops.add(x -> x.get(0).floordiv(nonZero.apply(x.get(1))));
            ops.add(x -> x.get(0).floormod(nonZero.apply(x.get(1))));
            ops.add(x -> x.get(0).truncdiv(nonZero.apply(x.get(1))));
            ops.add(x -> x.get(0).truncmod(nonZero.apply(x.get(1))));
            ops.add(x -> x.get(0).floordiv(3L));
            ops.add(x -> x.get(0).floormod(3L));
            ops.add(x -> x.get(0).truncdiv(3L));
            ops.add(x -> x.get(0).truncmod(3L));
            if (!t.isUnsigned()) {
                ops.add(x -> x.get(0).floordiv(-3L));
                ops.add(x -> x.get(0).floormod(-3L));
                ops.add(x -> x.get(0).floordiv(-1L));
                ops.add(x -> x.get(0).truncmod(-1L));
                // MIN / -1 wraps
                ops.add(x -> Literals.like(x.get(0), t.minInt())
                        .truncdiv(new Select(
                                x.get(1).lt(0L), Literals.like(x.get(1), -1L), Literals.like(x.get(1), 1L))));
            }
        }
        return ops;
    }

    /** Transcendental functions (floating types only). */
    private static List<Function<List<Expr>, Expr>> mathOps() {
        List<Function<List<Expr>, Expr>> ops = new ArrayList<>();
        ops.add(x -> call(Intrinsic.EXP, x.get(0)));
        ops.add(x -> call(Intrinsic.LOG, call(Intrinsic.ABS, x.get(0))));
        ops.add(x -> call(Intrinsic.LOG, x.get(0))); // NaN for negative inputs
        ops.add(x -> call(Intrinsic.TANH, x.get(0).mul(Literals.like(x.get(0), 3L))));
        ops.add(x -> call(Intrinsic.SIGMOID, x.get(0).mul(Literals.like(x.get(0), 5L))));
        ops.add(x -> call(Intrinsic.ERF, x.get(0).mul(Literals.like(x.get(0), 2L))));
        ops.add(x -> call(Intrinsic.POW, call(Intrinsic.ABS, x.get(0)), x.get(1).mul(Literals.like(x.get(1), 3L))));
        return ops;
    }

    private static PrimFunc func(String name, ForKind kind, DType t, List<Function<List<Expr>, Expr>> ops) {
        return Funcs.elementwise(name + "_" + t + "_" + kind.displayName(), kind, N, List.of(t, t), ops);
    }

    @ParameterizedTest
    @EnumSource(DType.class)
    void exactOperationsMatchBitForBit(DType t) {
        for (ForKind kind : List.of(ForKind.SERIAL, ForKind.VECTORIZED)) {
            JitCheck.exact(func("exact", kind, t, exactOps(t)), 11 + t.ordinal());
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = DType.class,
            names = {"FLOAT16", "BFLOAT16", "FLOAT32", "FLOAT64"})
    void transcendentalFunctionsMatchWithinUlps(DType t) {
        // float32/64: libm within 2 ulp of double-then-round; 16-bit types: float libm then one rounding
        double tol = t == DType.FLOAT64 ? 4 * ulp(t) : t == DType.FLOAT32 ? 3 * ulp(t) : ulp(t);
        for (ForKind kind : List.of(ForKind.SERIAL, ForKind.VECTORIZED)) {
            matches(func("math", kind, t, mathOps()), 23 + t.ordinal(), tol, 1e-30);
        }
    }
}
