package dev.kiln.interp;

import dev.kiln.ir.Binary;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * An integer expression of one type written as {@code constant + sum(coeff * variable)}, found at
 * compile time in trees of +, - and * by constants. Evaluating the form in 64-bit arithmetic and
 * wrapping once is exact: wrapping to 2^bits commutes with +, - and *.
 */
final class AffineForm {
    private long constant;
    private final Map<Integer, Long> terms = new LinkedHashMap<>(); // variable slot -> coefficient

    private AffineForm() {}

    /** The form of {@code e}, or null if it is not affine (in variables of type {@code t}). */
    static AffineForm of(Expr e, DType t, ToIntFunction<Var> slotOf) {
        if (e.dtype() != t || !t.isInt()) return null;
        if (e instanceof IntImm c) {
            AffineForm f = new AffineForm();
            f.constant = c.value();
            return f;
        }
        if (e instanceof Var v) {
            AffineForm f = new AffineForm();
            f.terms.put(slotOf.applyAsInt(v), 1L);
            return f;
        }
        if (!(e instanceof Binary b)) return null;
        return switch (b.op()) {
            case ADD, SUB -> {
                AffineForm x = of(b.a(), t, slotOf);
                AffineForm y = x == null ? null : of(b.b(), t, slotOf);
                yield y == null ? null : x.plus(y, b.op() == dev.kiln.ir.BinaryOp.SUB ? -1 : 1);
            }
            case MUL -> {
                AffineForm x = of(b.a(), t, slotOf);
                AffineForm y = x == null ? null : of(b.b(), t, slotOf);
                if (y == null) yield null;
                if (y.terms.isEmpty()) yield x.times(y.constant);
                if (x.terms.isEmpty()) yield y.times(x.constant);
                yield null;
            }
            case DIV, FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD, MIN, MAX -> null;
        };
    }

    private AffineForm plus(AffineForm o, long sign) {
        constant += sign * o.constant;
        for (Map.Entry<Integer, Long> t : o.terms.entrySet()) {
            long c = terms.getOrDefault(t.getKey(), 0L) + sign * t.getValue();
            if (c == 0) terms.remove(t.getKey());
            else terms.put(t.getKey(), c);
        }
        return this;
    }

    private AffineForm times(long k) {
        constant *= k;
        terms.replaceAll((slot, c) -> c * k);
        terms.values().removeIf(c -> c == 0);
        return this;
    }

    /** The cheapest node computing this form in type {@code t}. */
    LongNode node(DType t) {
        int sh = Compiler.shift(t);
        boolean uns = t.isUnsigned();
        if (terms.isEmpty()) return new LeafNodes.ConstLong(IntNodes.wrap(constant, sh, uns));
        if (terms.size() == 1) {
            Map.Entry<Integer, Long> e = terms.entrySet().iterator().next();
            if (constant == 0 && e.getValue() == 1) return new LeafNodes.VarLong(e.getKey());
            return new LeafNodes.Affine1(constant, e.getKey(), e.getValue(), sh, uns);
        }
        int[] slots = new int[terms.size()];
        long[] coeffs = new long[terms.size()];
        int k = 0;
        for (Map.Entry<Integer, Long> e : terms.entrySet()) {
            slots[k] = e.getKey();
            coeffs[k++] = e.getValue();
        }
        return new LeafNodes.Affine(constant, slots, coeffs, sh, uns);
    }
}
