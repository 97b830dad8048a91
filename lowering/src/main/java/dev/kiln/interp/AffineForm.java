package dev.kiln.interp;

import dev.kiln.ir.Binary;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * An integer expression of one type written as {@code constant + sum(coeff * variable) + sum(coeff * atom)}, found
 * at compile time in trees of +, - and * by constants. An atom is any other integer expression of one loop variable
 * whose range is a known constant (a packed layout's {@code floordiv(rc, 4)} or {@code floormod(o, 16)}): it is
 * tabulated over that range once, so the index costs a table read where it cost a tree of division nodes.
 * Evaluating the form in 64-bit arithmetic and wrapping once is exact: wrapping to 2^bits commutes with +, - and *.
 */
final class AffineForm {
    /** The largest loop range an atom is tabulated over. */
    static final int MAX_TABLE = 1 << 14;

    /** The longest loop {@link #deltas} are computed over. */
    static final int MAX_DELTAS = 1 << 16;

    /** A loop variable's constant range: {@code [min, min + extent)}. */
    record Range(long min, long extent) {}

    private long constant;
    private final Map<Integer, Long> terms = new LinkedHashMap<>(); // variable slot -> coefficient
    private final Map<Expr, Long> atoms = new IdentityHashMap<>(); // atom -> coefficient
    private final Map<Expr, Var> atomVars = new IdentityHashMap<>(); // atom -> its one variable

    private AffineForm() {}

    /** The form of {@code e}, or null if it is not affine (in variables of type {@code t}); no atoms. */
    static AffineForm of(Expr e, DType t, ToIntFunction<Var> slotOf) {
        return of(e, t, slotOf, v -> null);
    }

    /**
     * The form of {@code e} with atoms over the variables {@code rangeOf} gives a range for, or null if it is not
     * affine in variables of type {@code t} and such atoms.
     */
    static AffineForm of(Expr e, DType t, ToIntFunction<Var> slotOf, Function<Var, Range> rangeOf) {
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
                AffineForm x = of(b.a(), t, slotOf, rangeOf);
                AffineForm y = x == null ? null : of(b.b(), t, slotOf, rangeOf);
                yield y == null ? null : x.plus(y, b.op() == dev.kiln.ir.BinaryOp.SUB ? -1 : 1);
            }
            case MUL -> {
                AffineForm x = of(b.a(), t, slotOf, rangeOf);
                AffineForm y = x == null ? null : of(b.b(), t, slotOf, rangeOf);
                if (y == null) yield atom(b, rangeOf);
                if (y.isConstant()) yield x.times(y.constant);
                if (x.isConstant()) yield y.times(x.constant);
                yield atom(b, rangeOf);
            }
            case DIV, FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD, MIN, MAX -> atom(b, rangeOf);
        };
    }

    /** {@code e} as one atom, or null unless it is arithmetic on constants and one variable of a tabulable range. */
    private static AffineForm atom(Expr e, Function<Var, Range> rangeOf) {
        Var[] only = {null};
        boolean[] ok = {true};
        dev.kiln.ir.Exprs.forEach(e, x -> {
            switch (x) {
                case Var v -> {
                    if (only[0] != null && only[0] != v) ok[0] = false;
                    only[0] = v;
                }
                case IntImm c -> {}
                case Binary b -> ok[0] &= b.op() != dev.kiln.ir.BinaryOp.DIV;
                default -> ok[0] = false;
            }
        });
        if (!ok[0] || only[0] == null) return null;
        Range r = rangeOf.apply(only[0]);
        if (r == null || r.extent() < 1 || r.extent() > MAX_TABLE) return null;
        AffineForm f = new AffineForm();
        f.atoms.put(e, 1L);
        f.atomVars.put(e, only[0]);
        return f;
    }

    private boolean isConstant() {
        return terms.isEmpty() && atoms.isEmpty();
    }

    /** Whether the form has atoms (so {@link #node(DType)} cannot compute it: {@link #tabulated} does). */
    boolean hasAtoms() {
        return !atoms.isEmpty();
    }

    private AffineForm plus(AffineForm o, long sign) {
        constant += sign * o.constant;
        for (Map.Entry<Integer, Long> t : o.terms.entrySet()) {
            long c = terms.getOrDefault(t.getKey(), 0L) + sign * t.getValue();
            if (c == 0) terms.remove(t.getKey());
            else terms.put(t.getKey(), c);
        }
        for (Map.Entry<Expr, Long> a : o.atoms.entrySet()) {
            atoms.merge(a.getKey(), sign * a.getValue(), Long::sum);
            atomVars.put(a.getKey(), o.atomVars.get(a.getKey()));
        }
        return this;
    }

    private AffineForm times(long k) {
        constant *= k;
        terms.replaceAll((slot, c) -> c * k);
        terms.values().removeIf(c -> c == 0);
        atoms.replaceAll((atom, c) -> c * k);
        return this;
    }

    /**
     * This form with atoms as one node: each variable that has atoms reads one table of its part of the form over its
     * range ({@link #along}); {@code generic} computes the expression when a variable is outside its range (never in
     * a loop over that range). Null when an atom cannot be evaluated at some value of the range (a division by zero
     * the program may never reach).
     */
    LongNode tabulated(
            DType t,
            ToIntFunction<Var> slotOf,
            Function<Var, Range> rangeOf,
            Function<Expr, LongNode> compile,
            LongNode generic) {
        List<Var> vars = new ArrayList<>();
        for (Var v : atomVars.values()) if (!vars.contains(v)) vars.add(v);
        Map<Integer, Long> linear = new LinkedHashMap<>(terms);
        int[] tabSlots = new int[vars.size()];
        long[] mins = new long[vars.size()];
        long[][] tabs = new long[vars.size()][];
        for (int k = 0; k < vars.size(); k++) {
            Var v = vars.get(k);
            Range r = rangeOf.apply(v);
            tabSlots[k] = slotOf.applyAsInt(v);
            mins[k] = r.min();
            tabs[k] = along(v, tabSlots[k], r, compile);
            if (tabs[k] == null) return null;
            linear.remove(tabSlots[k]);
        }
        int[] slots = linear.keySet().stream().mapToInt(Integer::intValue).toArray();
        long[] coeffs = linear.values().stream().mapToLong(Long::longValue).toArray();
        return new LeafNodes.Tabulated(
                constant, slots, coeffs, tabSlots, mins, tabs, generic, Compiler.shift(t), t.isUnsigned());
    }

    /**
     * How this form changes along {@code v} (in {@code slot}) over its range {@code r}: {@code d[x] = g(min + x) -
     * g(min)} ({@link #along}), so the form's value at {@code min + x} is its value at {@code min} plus {@code d[x]},
     * modulo its type's width. Null when the range is longer than {@link #MAX_DELTAS} or an atom cannot be evaluated
     * at some value.
     */
    long[] deltas(Var v, int slot, Range r, Function<Expr, LongNode> compile) {
        if (r.extent() > MAX_DELTAS) return null;
        long[] d = along(v, slot, r, compile);
        if (d == null) return null;
        long first = d[0];
        for (int x = 0; x < d.length; x++) d[x] -= first;
        return d;
    }

    /**
     * {@code g(min + x)} for every {@code x} of {@code v}'s range {@code r}, where {@code g} is the part of this form
     * that depends on {@code v} (in {@code slot}): its term and its atoms, each atom evaluated with its node from
     * {@code compile} at every value. Null when the range is empty or an atom cannot be evaluated at some value.
     */
    private long[] along(Var v, int slot, Range r, Function<Expr, LongNode> compile) {
        if (r.extent() < 1) return null;
        long[] g = new long[(int) r.extent()];
        long c = terms.getOrDefault(slot, 0L);
        for (int x = 0; x < g.length; x++) g[x] = c * (r.min() + x);
        Frame scratch = new Frame(slot + 1, 0, 0, 0, null);
        try {
            for (Map.Entry<Expr, Long> a : atoms.entrySet()) {
                if (atomVars.get(a.getKey()) != v) continue;
                LongNode node = compile.apply(a.getKey());
                for (int x = 0; x < g.length; x++) {
                    scratch.ints[slot] = r.min() + x;
                    g[x] += a.getValue() * node.eval(scratch);
                }
            }
        } catch (RuntimeException e) {
            return null;
        }
        return g;
    }

    /** The cheapest node computing this form in type {@code t}; the form has no atoms. */
    LongNode node(DType t) {
        if (hasAtoms()) throw new IllegalStateException("a form with atoms is tabulated");
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
