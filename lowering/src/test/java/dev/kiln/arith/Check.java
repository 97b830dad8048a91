package dev.kiln.arith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.Var;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/** Assertions shared by the simplifier tests. */
public final class Check {
    private Check() {}

    /** Simplifies with a trace; returns the result and the rules that fired. */
    public record Outcome(Expr result, List<String> fired) {}

    public static Outcome run(Expr in, Map<Var, IntRange> ranges) {
        List<String> fired = new ArrayList<>();
        Expr out = new Simplifier(ranges).withTrace(fired::add).simplify(in);
        return new Outcome(out, fired);
    }

    /**
     * Asserts that {@code in} simplifies to exactly {@code expected}, that {@code rule} fired on
     * the way, and that the result has the value of the input at many random points in range.
     */
    public static void assertRule(String rule, Expr in, Expr expected, Map<Var, IntRange> ranges) {
        Outcome o = run(in, ranges);
        assertEquals(ExprPrinter.print(expected), ExprPrinter.print(o.result()), "simplifying " + in);
        assertEquals(expected, o.result(), "same print but different structure for " + in);
        assertTrue(o.fired().contains(rule), "rule " + rule + " did not fire for " + in + "; fired " + o.fired());
        if (isEvaluable(in)) {
            assertTrue(assertSameValues(in, o.result(), ranges, 400, in.hashCode()) > 0, "no sample evaluated " + in);
        }
    }

    public static void assertRule(String rule, Expr in, Expr expected) {
        assertRule(rule, in, expected, Map.of());
    }

    /** Asserts that nothing changes {@code in}, and that {@code rule} (if not null) did not fire. */
    public static void assertUnchanged(String rule, Expr in, Map<Var, IntRange> ranges) {
        Outcome o = run(in, ranges);
        assertEquals(ExprPrinter.print(in), ExprPrinter.print(o.result()));
        assertEquals(in, o.result());
        if (rule != null) assertTrue(!o.fired().contains(rule), rule + " fired on " + in);
    }

    public static void assertUnchanged(String rule, Expr in) {
        assertUnchanged(rule, in, Map.of());
    }

    static boolean isEvaluable(Expr e) {
        boolean[] ok = {true};
        Exprs.forEach(e, x -> {
            DType t = x.dtype();
            if (t == DType.FLOAT16
                    || t == DType.BFLOAT16
                    || x instanceof dev.kiln.ir.Call c && !c.dtype().isInt()
                    || x instanceof dev.kiln.ir.BufferLoad
                    || x instanceof dev.kiln.ir.Reduce
                    || x instanceof dev.kiln.ir.TensorRead) {
                ok[0] = false;
            }
        });
        return ok[0];
    }

    /** The variables of some expressions, in order of first appearance. */
    public static List<Var> vars(Expr... es) {
        Set<Var> out = new LinkedHashSet<>();
        for (Expr e : es)
            Exprs.forEach(e, x -> {
                if (x instanceof Var v) out.add(v);
            });
        return new ArrayList<>(out);
    }

    /**
     * Evaluates both expressions at {@code samples} random points (variables in their ranges, or
     * anywhere in their type, edge values included) and asserts equal values wherever the
     * original evaluates without a runtime error; returns how many points were compared.
     */
    public static int assertSameValues(
            Expr original, Expr simplified, Map<Var, IntRange> ranges, int samples, long seed) {
        Random rnd = new Random(seed);
        List<Var> vs = vars(original, simplified);
        int compared = 0;
        for (int n = 0; n < samples; n++) {
            Map<Var, Number> env = new HashMap<>();
            for (Var v : vs) env.put(v, sample(v.dtype(), ranges.get(v), rnd));
            TestEval ev = new TestEval(env);
            Number want;
            try {
                want = ev.eval(original);
            } catch (ArithmeticException runtimeError) {
                continue;
            }
            Number got;
            try {
                got = ev.eval(simplified);
            } catch (ArithmeticException e) {
                fail("simplified " + simplified + " fails at " + env + " where " + original + " = " + want + ": " + e);
                return compared;
            }
            compared++;
            boolean same = original.dtype().isFloat()
                    ? Double.compare(want.doubleValue(), got.doubleValue()) == 0
                    : want.longValue() == got.longValue();
            if (!same) {
                fail(original + " = " + want + " but simplified " + simplified + " = " + got + " at " + env);
            }
        }
        return compared;
    }

    /** A random value of a variable: in its range when it has one, else in its type, edges often. */
    public static Number sample(DType t, IntRange r, Random rnd) {
        if (t.isFloat()) {
            double[] special = {
                0.0,
                -0.0,
                1.0,
                -1.0,
                Double.NaN,
                Double.POSITIVE_INFINITY,
                Double.NEGATIVE_INFINITY,
                Float.MIN_VALUE,
                Float.MAX_VALUE
            };
            double v = rnd.nextInt(3) == 0 ? special[rnd.nextInt(special.length)] : rnd.nextGaussian() * 100;
            return t == DType.FLOAT32 ? (double) (float) v : v;
        }
        IntRange range = r != null ? r.intersect(IntRange.full(t)) : IntRange.full(t);
        long lo = range.min(), hi = range.max();
        return switch (rnd.nextInt(6)) {
            case 0 -> lo;
            case 1 -> hi;
            case 2 -> clamp(rnd.nextInt(21) - 10, lo, hi);
            default -> uniform(lo, hi, rnd);
        };
    }

    private static long uniform(long lo, long hi, Random rnd) {
        if (lo == Long.MIN_VALUE && hi == Long.MAX_VALUE) return rnd.nextLong();
        return hi < Long.MAX_VALUE ? rnd.nextLong(lo, hi + 1) : rnd.nextLong(lo - 1, hi) + 1;
    }

    private static long clamp(long v, long lo, long hi) {
        return Math.max(lo, Math.min(hi, v));
    }
}
