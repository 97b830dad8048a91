package dev.kiln.ir;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/** Small utilities over expressions: substitution and pre-order traversal. */
public final class Exprs {
    private Exprs() {}

    /** Replaces variables by expressions (the map's keys compare by identity). */
    public static Expr substitute(Expr e, Map<? extends Var, ? extends Expr> map) {
        if (map.isEmpty()) return e;
        return new ExprRewriter() {
            @Override
            public Expr visit(Expr x) {
                if (x instanceof Var v) {
                    Expr r = map.get(v);
                    if (r != null) {
                        if (r.dtype() != v.dtype()) {
                            throw new KilnException("substituting " + r + " (" + r.dtype() + ") for " + v.name() + " ("
                                    + v.dtype() + ")");
                        }
                        return r;
                    }
                    return v;
                }
                return rewriteChildren(x);
            }
        }.visit(e);
    }

    /** Calls {@code f} on {@code e} and every sub-expression, parents first. */
    public static void forEach(Expr e, Consumer<Expr> f) {
        f.accept(e);
        for (Expr c : children(e)) forEach(c, f);
    }

    /** The direct sub-expressions of a node (a Reduce's sources and condition). */
    public static List<Expr> children(Expr e) {
        return switch (e) {
            case IntImm c -> List.of();
            case FloatImm c -> List.of();
            case Var v -> List.of();
            case Binary b -> List.of(b.a(), b.b());
            case Compare c -> List.of(c.a(), c.b());
            case And a -> List.of(a.a(), a.b());
            case Or o -> List.of(o.a(), o.b());
            case Not n -> List.of(n.a());
            case Select s -> List.of(s.cond(), s.t(), s.f());
            case Cast c -> List.of(c.value());
            case Call c -> c.args();
            case TensorRead r -> r.indices();
            case BufferLoad l -> l.indices();
            case Reduce r -> {
                List<Expr> out = new ArrayList<>(r.sources());
                out.add(r.condition());
                yield out;
            }
        };
    }

    /** Whether {@code e} mentions variable {@code v}. */
    public static boolean uses(Expr e, Var v) {
        boolean[] found = {false};
        forEach(e, x -> {
            if (x == v) found[0] = true;
        });
        return found[0];
    }
}
