package dev.kiln.schedule;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Reducer;
import dev.kiln.ir.Var;
import dev.kiln.tir.Let;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The statements of a reduction: the initialisation of every output to the reducer's identity,
 * and one update {@code out = combine(out, source)}. A multi-value reducer (argmax) reads all
 * accumulators and sources into lets first, so no output is overwritten before it is read.
 */
final class ReductionBody {
    private ReductionBody() {}

    static Stmt init(Reduce r, List<Buffer> outs, List<Expr> idx) {
        List<Stmt> init = new ArrayList<>();
        for (int v = 0; v < outs.size(); v++)
            init.add(new Store(outs.get(v), idx, r.reducer().identities().get(v)));
        return Seq.of(init);
    }

    /** The update; {@code convert} turns a DSL expression of the source into loop-IR form. */
    static Stmt update(Reduce r, List<Buffer> outs, List<Expr> idx, UnaryOperator<Expr> convert) {
        Reducer red = r.reducer();
        if (red.arity() == 1) {
            Expr acc = new BufferLoad(outs.get(0), idx);
            Expr src = convert.apply(r.sources().get(0));
            return new Store(
                    outs.get(0),
                    idx,
                    Exprs.substitute(
                            red.results().get(0),
                            Map.of(red.lhs().get(0), acc, red.rhs().get(0), src)));
        }
        Map<Var, Expr> args = new IdentityHashMap<>();
        List<Var> xs = new ArrayList<>(), ys = new ArrayList<>(), ns = new ArrayList<>();
        for (int v = 0; v < red.arity(); v++) {
            Var x = new Var(red.lhs().get(v).name(), red.dtype(v));
            Var y = new Var(red.rhs().get(v).name(), red.dtype(v));
            xs.add(x);
            ys.add(y);
            ns.add(new Var(outs.get(v).name() + "_new", red.dtype(v)));
            args.put(red.lhs().get(v), x);
            args.put(red.rhs().get(v), y);
        }
        List<Stmt> stores = new ArrayList<>();
        for (int v = 0; v < outs.size(); v++) stores.add(new Store(outs.get(v), idx, ns.get(v)));
        Stmt update = Seq.of(stores);
        for (int v = red.arity() - 1; v >= 0; v--)
            update = new Let(ns.get(v), Exprs.substitute(red.results().get(v), args), update);
        for (int v = red.arity() - 1; v >= 0; v--)
            update = new Let(ys.get(v), convert.apply(r.sources().get(v)), update);
        for (int v = red.arity() - 1; v >= 0; v--)
            update = new Let(xs.get(v), new BufferLoad(outs.get(v), idx), update);
        return update;
    }
}
