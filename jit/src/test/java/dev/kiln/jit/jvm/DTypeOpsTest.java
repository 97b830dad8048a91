package dev.kiln.jit.jvm;

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
 * Every operator and intrinsic on every dtype, through the JVM backend and the interpreter on
 * seeded random inputs, in a serial loop (scalar bytecode), a vectorized loop of 37 (full vector
 * chunks and a masked tail; lane-by-lane code for the operators without a vector form) and an
 * unrolled loop. The JVM backend calls the same {@link Math} functions as the interpreter, so
 * every result, transcendental ones included, must agree bit for bit (NaNs of any payload equal).
 */
class DTypeOpsTest {
    private static final int N = 37;

    private static Expr call(Intrinsic f, Expr... a) {
        return new Call(f, List.of(a));
    }

    static List<Function<List<Expr>, Expr>> ops(DType t) {
        List<Function<List<Expr>, Expr>> ops = new ArrayList<>();
        if (t.isBool()) {
            ops.add(x -> x.get(0).and(x.get(1)));
            ops.add(x -> x.get(0).or(x.get(1)));
            ops.add(x -> x.get(0).not());
            ops.add(x -> x.get(0).eq(x.get(1)));
            ops.add(x -> x.get(0).ne(x.get(1)));
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
        ops.add(x -> x.get(0).lt(x.get(1)).and(x.get(1).gt(Literals.like(x.get(1), 0L))));
        ops.add(x -> x.get(0)
                .lt(x.get(1))
                .or(x.get(1).gt(Literals.like(x.get(1), 0L)))
                .not());
        ops.add(x -> new Select(x.get(0).lt(x.get(1)), x.get(0), x.get(1).neg()));
        ops.add(x -> call(Intrinsic.ABS, x.get(0)));
        ops.add(x -> x.get(0).mul(x.get(0)).mul(x.get(0)).add(x.get(1).mul(Literals.like(x.get(1), 7L))));
        ops.add(x -> x.get(0).mul(Literals.like(x.get(0), 100L)).mul(x.get(1))); // wraps for narrow integers
        if (t.isFloat()) {
            ops.add(x -> x.get(0).div(x.get(1)));
            ops.add(x -> x.get(0).div(x.get(1).sub(x.get(1)))); // +-inf and NaN
            ops.add(x -> x.get(0).div(x.get(1).sub(x.get(1))).min(x.get(1))); // NaN through min
            ops.add(x -> x.get(0).div(x.get(1).sub(x.get(1))).max(x.get(1)));
            ops.add(x -> x.get(0).div(x.get(1).sub(x.get(1))).lt(x.get(1))); // comparisons with NaN
            ops.add(x -> x.get(0).div(x.get(1).sub(x.get(1))).ne(x.get(1)));
            ops.add(x -> call(Intrinsic.SQRT, x.get(0)));
            ops.add(x -> call(Intrinsic.SQRT, call(Intrinsic.ABS, x.get(0))));
            ops.add(x -> call(Intrinsic.RSQRT, call(Intrinsic.ABS, x.get(0))));
            ops.add(x -> call(Intrinsic.FLOOR, x.get(0).mul(Literals.like(x.get(0), 9.5))));
            ops.add(x -> call(Intrinsic.CEIL, x.get(0).mul(Literals.like(x.get(0), 9.5))));
            ops.add(x -> call(Intrinsic.ROUND, x.get(0).mul(Literals.like(x.get(0), 4.0))));
            ops.add(x -> call(Intrinsic.FMA, x.get(0), x.get(1), x.get(0)));
            ops.add(x -> call(Intrinsic.EXP, x.get(0)));
            ops.add(x -> call(Intrinsic.LOG, call(Intrinsic.ABS, x.get(0))));
            ops.add(x -> call(Intrinsic.LOG, x.get(0))); // NaN for negative inputs
            ops.add(x -> call(Intrinsic.TANH, x.get(0).mul(Literals.like(x.get(0), 3L))));
            ops.add(x -> call(Intrinsic.SIGMOID, x.get(0).mul(Literals.like(x.get(0), 5L))));
            ops.add(x -> call(Intrinsic.ERF, x.get(0).mul(Literals.like(x.get(0), 2L))));
            ops.add(x ->
                    call(Intrinsic.POW, call(Intrinsic.ABS, x.get(0)), x.get(1).mul(Literals.like(x.get(1), 3L))));
        } else {
            Function<Expr, Expr> nonZero = b -> new Select(b.eq(0L), Literals.like(b, 3L), b);
            ops.add(x -> x.get(0).floordiv(nonZero.apply(x.get(1))));
            ops.add(x -> x.get(0).floormod(nonZero.apply(x.get(1))));
            ops.add(x -> x.get(0).truncdiv(nonZero.apply(x.get(1))));
            ops.add(x -> x.get(0).truncmod(nonZero.apply(x.get(1))));
            ops.add(x -> x.get(0).floordiv(3L));
            ops.add(x -> x.get(0).floormod(3L));
            // constant divisors are plain bytecode (no JvmOps call): powers of two, truncation, negatives
            ops.add(x -> x.get(0).floordiv(8L));
            ops.add(x -> x.get(0).floormod(8L));
            ops.add(x -> x.get(0).truncdiv(3L));
            ops.add(x -> x.get(0).truncmod(7L));
            ops.add(x -> x.get(0).mul(x.get(1)).floordiv(1L).add(x.get(1).floormod(1L)));
            if (!t.isUnsigned()) {
                ops.add(x -> x.get(0).truncdiv(-3L));
                ops.add(x -> x.get(0).truncmod(-7L));
                ops.add(x -> Literals.like(x.get(0), t.minInt())
                        .add(x.get(1).max(0L))
                        .truncdiv(-1L));
            }
            if (!t.isUnsigned()) {
                ops.add(x -> x.get(0).floordiv(-3L));
                ops.add(x -> x.get(0).floormod(-3L));
                ops.add(x -> x.get(0).truncmod(-1L));
                ops.add(x -> Literals.like(x.get(0), t.minInt())
                        .truncdiv(new Select(
                                x.get(1).lt(0L),
                                Literals.like(x.get(1), -1L),
                                Literals.like(x.get(1), 1L)))); // MIN / -1 wraps
                ops.add(x -> call(
                        Intrinsic.ABS,
                        Literals.like(x.get(0), t.minInt()).add(x.get(1).max(Literals.like(x.get(1), 0L)))));
            }
        }
        return ops;
    }

    @ParameterizedTest
    @EnumSource(DType.class)
    void everyOperatorMatchesTheInterpreterBitForBit(DType t) {
        for (ForKind kind : List.of(ForKind.SERIAL, ForKind.VECTORIZED, ForKind.UNROLLED)) {
            PrimFunc f = dev.kiln.jit.Funcs.elementwise(
                    "ops_" + t + "_" + kind.displayName(), kind, N, List.of(t, t), ops(t));
            JvmCheck.exact(f, 11 + t.ordinal());
        }
    }
}
