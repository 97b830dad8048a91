package dev.kiln.arith;

import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The integer expressions of a lowered function, each with the ranges of the loops around it:
 * every store and load index and every if condition. What the simplifier sees when it
 * simplifies a lowered schedule, for tests that want realistic index expressions.
 */
final class LoweredIndices {
    private LoweredIndices() {}

    /** An expression and the ranges of its enclosing loops (those with constant bounds). */
    record Site(Expr expr, Map<Var, IntRange> ranges) {}

    static List<Site> of(PrimFunc f) {
        List<Site> out = new ArrayList<>();
        walk(f.body(), new HashMap<>(), out);
        return out;
    }

    private static void walk(Stmt s, Map<Var, IntRange> ranges, List<Site> out) {
        switch (s) {
            case For f -> {
                Map<Var, IntRange> inner = new HashMap<>(ranges);
                if (f.min() instanceof IntImm m && f.extent() instanceof IntImm e && e.value() > 0) {
                    inner.put(f.var(), IntRange.ofExtent(m.value(), e.value()));
                }
                walk(f.body(), inner, out);
            }
            case Store st -> {
                for (Expr i : st.indices()) out.add(new Site(i, Map.copyOf(ranges)));
                loads(st.value(), ranges, out);
            }
            case Allocate a -> walk(a.body(), ranges, out);
            case Seq q -> {
                for (Stmt c : q.stmts()) walk(c, ranges, out);
            }
            case IfThenElse i -> {
                out.add(new Site(i.cond(), Map.copyOf(ranges)));
                loads(i.cond(), ranges, out);
                walk(i.then(), ranges, out);
                if (i.otherwise() != null) walk(i.otherwise(), ranges, out);
            }
            case Let l -> {
                loads(l.value(), ranges, out);
                walk(l.body(), ranges, out);
            }
            case Evaluate e -> loads(e.value(), ranges, out);
            case Pragma p -> walk(p.body(), ranges, out);
            case Barrier b -> {}
        }
    }

    private static void loads(Expr e, Map<Var, IntRange> ranges, List<Site> out) {
        Exprs.forEach(e, x -> {
            if (x instanceof BufferLoad l) {
                for (Expr i : l.indices()) out.add(new Site(i, Map.copyOf(ranges)));
            }
        });
    }
}
