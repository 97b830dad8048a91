package dev.kiln.ir;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.BiFunction;

/**
 * A commutative, associative reduction with an identity: {@code results = combine(lhs, rhs)}
 * over k values at once (k = 1 for sum; k = 2 for argmax over (value, index)). {@code lhs} are
 * the accumulators, {@code rhs} the new values. Kiln trusts the user that the combiner is
 * commutative and associative; schedules (rfactor, reordering) rely on it.
 */
public record Reducer(String name, List<Var> lhs, List<Var> rhs, List<Expr> results, List<Expr> identities) {
    public Reducer {
        Objects.requireNonNull(name, "name");
        lhs = List.copyOf(lhs);
        rhs = List.copyOf(rhs);
        results = List.copyOf(results);
        identities = List.copyOf(identities);
        int k = lhs.size();
        if (k == 0) throw new KilnException("reducer '" + name + "' combines no values");
        if (rhs.size() != k || results.size() != k || identities.size() != k) {
            throw new KilnException(
                    "reducer '" + name + "' needs as many rhs, results and identities as lhs (" + k + ")");
        }
        for (int v = 0; v < k; v++) {
            DType t = lhs.get(v).dtype();
            if (rhs.get(v).dtype() != t
                    || results.get(v).dtype() != t
                    || identities.get(v).dtype() != t) {
                throw new KilnException("reducer '" + name + "' value " + v + " mixes dtypes: lhs " + t + ", rhs "
                        + rhs.get(v).dtype() + ", result " + results.get(v).dtype() + ", identity "
                        + identities.get(v).dtype());
            }
        }
    }

    /** Number of values combined at once. */
    public int arity() {
        return lhs.size();
    }

    public DType dtype(int valueIndex) {
        return lhs.get(valueIndex).dtype();
    }

    /**
     * A user-defined reducer over values of the given types. The combiner receives the
     * accumulators and the new values and returns the combined values.
     */
    public static Reducer of(
            String name,
            List<DType> dtypes,
            BiFunction<List<Var>, List<Var>, List<Expr>> combine,
            List<Expr> identities) {
        List<Var> l = new ArrayList<>();
        List<Var> r = new ArrayList<>();
        for (int v = 0; v < dtypes.size(); v++) {
            l.add(new Var("x" + v, dtypes.get(v)));
            r.add(new Var("y" + v, dtypes.get(v)));
        }
        return new Reducer(name, l, r, combine.apply(l, r), identities);
    }

    /** A single-value user-defined reducer. */
    public static Reducer of(String name, DType dtype, BiFunction<Expr, Expr, Expr> combine, Expr identity) {
        return of(name, List.of(dtype), (l, r) -> List.of(combine.apply(l.get(0), r.get(0))), List.of(identity));
    }

    public static Reducer sum(DType t) {
        return of("sum", t, Expr::add, Literals.of(t, 0L));
    }

    public static Reducer prod(DType t) {
        return of("prod", t, Expr::mul, Literals.of(t, 1L));
    }

    public static Reducer max(DType t) {
        return of("max", t, Expr::max, lowest(t));
    }

    public static Reducer min(DType t) {
        return of("min", t, Expr::min, highest(t));
    }

    /** The identity of max: minus infinity for floats, the smallest value for integers. */
    public static Expr lowest(DType t) {
        if (t.isFloat()) return new FloatImm(t, Double.NEGATIVE_INFINITY);
        return new IntImm(t, t.minInt());
    }

    /** The identity of min: plus infinity for floats, the largest value for integers. */
    public static Expr highest(DType t) {
        if (t.isFloat()) return new FloatImm(t, Double.POSITIVE_INFINITY);
        return new IntImm(t, t.maxInt());
    }

    /**
     * Applies this reducer over the axes. For a k-value reducer, returns k {@link Reduce}
     * expressions (one per value) that a multi-output {@code compute} turns into k tensors.
     */
    public List<Expr> reduce(List<Expr> sources, List<IterVar> axes, Expr condition) {
        List<Expr> out = new ArrayList<>();
        for (int v = 0; v < arity(); v++) out.add(new Reduce(this, sources, axes, condition, v));
        return out;
    }

    /** A single-value reduction. */
    public Expr reduce(Expr source, List<IterVar> axes, Expr condition) {
        if (arity() != 1) {
            throw new KilnException("reducer '" + name + "' combines " + arity() + " values; pass a list of sources");
        }
        return new Reduce(this, List.of(source), axes, condition, 0);
    }

    @Override
    public String toString() {
        return name;
    }
}
