package dev.kiln.te;

import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Range;
import dev.kiln.ir.Reduce;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Builds a compute's spatial axes and checks that every axis of the compute, spatial or reduce,
 * has its own name (a schedule names loops by their axis names, so two axes of one name would make
 * two loops of one name).
 * <ul>
 *   <li>Names the user gave ({@link AxisNames}) are kept; a reduce axis named like one of them, or
 *       two reduce axes of one name, is rejected with a {@link KilnException} naming both axes.</li>
 *   <li>Default names ({@code i, j, k, l, m, n}, or {@code ax0, ax1, ...} past rank 6) give way: a
 *       default spatial name that a reduce axis also uses is replaced by the first of {@code i..n},
 *       then {@code ax<d>}, that no axis of the compute uses (so a batch matmul {@code [b, m, n]}
 *       with reduce axis {@code k} has loops {@code i, j, l, k}).</li>
 * </ul>
 */
final class SpatialAxes {
    private SpatialAxes() {}

    private static final String[] DEFAULT = {"i", "j", "k", "l", "m", "n"};

    /** Checks the arguments of a compute, builds its axes, runs the lambda and settles the names. */
    static ComputeOp build(String name, String tag, Shape s, AxisNames names, Function<List<IterVar>, List<Expr>> f) {
        requireArguments(name, s, f);
        if (names != null && names.size() != s.rank()) {
            throw new KilnException("compute '" + name + "': " + names.size() + " axis name(s) " + names + " for shape "
                    + s + " of rank " + s.rank());
        }
        List<IterVar> axes = new ArrayList<>();
        for (int d = 0; d < s.rank(); d++) {
            String n = names != null ? names.get(d) : defaultName(d, s.rank());
            axes.add(new IterVar(n, Range.of(s.get(d)), IterVar.Kind.SPATIAL));
        }
        List<Expr> bodies = f.apply(List.copyOf(axes));
        if (bodies == null) throw new KilnException("compute '" + name + "': the index lambda returned null");
        for (int v = 0; v < bodies.size(); v++) {
            if (bodies.get(v) == null) {
                throw new KilnException("compute '" + name + "': the index lambda returned null"
                        + (bodies.size() > 1 ? " for output " + v : ""));
            }
        }
        Map<String, IterVar> reduceAxes = reduceAxesByName(name, bodies);
        if (names != null) {
            for (IterVar a : axes) {
                if (reduceAxes.containsKey(a.name())) {
                    throw new KilnException("compute '" + name + "': reduce axis '" + a.name()
                            + "' has the name of spatial axis '" + a.name() + "' (axis " + axes.indexOf(a) + " of "
                            + names + "); rename one of them");
                }
            }
        } else {
            Map<IterVar, Expr> renamed = rename(axes, reduceAxes.keySet());
            if (!renamed.isEmpty()) {
                axes.replaceAll(a -> renamed.containsKey(a) ? (IterVar) renamed.get(a) : a);
                bodies = bodies.stream().map(b -> Exprs.substitute(b, renamed)).toList();
            }
        }
        return new ComputeOp(name, tag, axes, bodies);
    }

    static void requireArguments(String name, Shape s, Object f) {
        if (name == null) throw new KilnException("compute: the name is null");
        if (name.isEmpty()) throw new KilnException("compute: the name is empty");
        if (s == null) throw new KilnException("compute '" + name + "': the shape is null");
        if (f == null) throw new KilnException("compute '" + name + "': the index lambda is null");
    }

    private static String defaultName(int d, int rank) {
        return rank <= DEFAULT.length ? DEFAULT[d] : "ax" + d;
    }

    /** The reduce axes of the bodies by name; two distinct reduce axes of one name are refused. */
    private static Map<String, IterVar> reduceAxesByName(String name, List<Expr> bodies) {
        Map<String, IterVar> byName = new LinkedHashMap<>();
        Set<IterVar> seen = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        for (Expr b : bodies) {
            Exprs.forEach(b, x -> {
                if (x instanceof Reduce r) {
                    for (IterVar a : r.axes()) {
                        if (!seen.add(a)) continue;
                        IterVar other = byName.putIfAbsent(a.name(), a);
                        if (other != null) {
                            throw new KilnException("compute '" + name + "': two reduce axes are named '" + a.name()
                                    + "' (extents " + other.dom() + " and " + a.dom() + "); give each its own name");
                        }
                    }
                }
            });
        }
        return byName;
    }

    /** Fresh axes for the default-named axes whose names a reduce axis uses. */
    private static Map<IterVar, Expr> rename(List<IterVar> axes, Set<String> reduceNames) {
        Set<String> used = new HashSet<>(reduceNames);
        for (IterVar a : axes) used.add(a.name());
        Map<IterVar, Expr> out = new IdentityHashMap<>();
        for (int d = 0; d < axes.size(); d++) {
            IterVar a = axes.get(d);
            if (!reduceNames.contains(a.name())) continue;
            String fresh = null;
            for (String c : DEFAULT) {
                if (!used.contains(c)) {
                    fresh = c;
                    break;
                }
            }
            if (fresh == null) {
                fresh = "ax" + d;
                for (int n = 0; used.contains(fresh); n++) fresh = "ax" + d + "_" + n;
            }
            used.add(fresh);
            out.put(a, new IterVar(fresh, a.dom(), IterVar.Kind.SPATIAL));
        }
        return out;
    }
}
