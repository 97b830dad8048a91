package dev.kiln.autoschedule.network;

import dev.kiln.ir.Binary;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * EXPERIMENT: in a parallel loop p whose body reads an argument A in slabs (A's index = p * S + r, r in [0, S), A of
 * extent(p) * S elements), prefetch the next slab ((p + 1) * S ...) spread over the first serial loops of the body.
 */
final class PrefetchSlab {
    static String note = "";

    static PrimFunc apply(PrimFunc f) {
        note = "";
        if (!(f.body() instanceof For par) || par.kind() != ForKind.PARALLEL || !(par.extent() instanceof IntImm pe))
            return f;
        List<Buffer> args = f.params().subList(0, f.params().size() - 1);
        Map<Buffer, Long> slabs = new HashMap<>();
        Map<Buffer, List<Expr>> anyIdx = new HashMap<>();
        walkLoads(par.body(), ld -> {
            if (!args.contains(ld.buffer().base()) || ld.indices().size() != 1) return;
            Expr idx = ld.indices().get(0);
            Long s = slabOf(idx, par.var(), pe.value(), ld.buffer());
            if (s == null) slabs.put(ld.buffer(), -1L);
            else if (!slabs.containsKey(ld.buffer())) {
                slabs.put(ld.buffer(), s);
                anyIdx.put(ld.buffer(), ld.indices());
            } else if (slabs.get(ld.buffer()) != (long) s) slabs.put(ld.buffer(), -1L);
        });
        List<Buffer> bs = new ArrayList<>();
        for (var e : slabs.entrySet()) if (e.getValue() > 0) bs.add(e.getKey());
        if (bs.isEmpty()) return f;
        // the first serial loops of the body
        Stmt b = par.body();
        List<Stmt> wrappers = new ArrayList<>();
        For f1 = firstFor(b);
        if (f1 == null || !(f1.extent() instanceof IntImm e1)) return f;
        long t = e1.value();
        Expr it = f1.var();
        For target = f1;
        if (t < 8 && f1.body() instanceof For f2 && f2.kind() == ForKind.SERIAL && f2.extent() instanceof IntImm e2) {
            it = new Binary(dev.kiln.ir.BinaryOp.ADD, new Binary(dev.kiln.ir.BinaryOp.MUL, f1.var(), e2), f2.var());
            t *= e2.value();
            target = f2;
        }
        List<Stmt> pf = new ArrayList<>();
        for (Buffer a : bs) {
            long s = slabs.get(a);
            int perLine = 64 / a.dtype().bytes();
            long lines = (s + perLine - 1) / perLine;
            long per = (lines + t - 1) / t;
            Expr start = new Binary(dev.kiln.ir.BinaryOp.ADD,
                    new Binary(dev.kiln.ir.BinaryOp.MUL,
                            new Binary(dev.kiln.ir.BinaryOp.ADD, par.var(), IntImm.i32(1)), IntImm.i32(s)),
                    new Binary(dev.kiln.ir.BinaryOp.MUL, it, IntImm.i32(per * perLine)));
            pf.add(new Pragma("kiln_prefetch_lines", per, new Evaluate(new BufferLoad(a, List.of(start)))));
            note += " " + a.name() + ": slab " + s + ", " + per + " lines x " + t;
        }
        For tgt = target;
        List<Stmt> body = new ArrayList<>(pf);
        body.add(tgt.body());
        For nt = new For(tgt.var(), tgt.min(), tgt.extent(), tgt.kind(), tgt.thread(), new Seq(body));
        return new PrimFunc(f.name(), f.params(), replace(par, tgt, nt));
    }

    private static Stmt replace(Stmt s, For old, For neu) {
        if (s == old) return neu;
        return switch (s) {
            case For f -> new For(f.var(), f.min(), f.extent(), f.kind(), f.thread(), replace(f.body(), old, neu));
            case Allocate a -> new Allocate(a.buffer(), replace(a.body(), old, neu));
            case Let l -> new Let(l.var(), l.value(), replace(l.body(), old, neu));
            case Seq q -> new Seq(q.stmts().stream().map(c -> replace(c, old, neu)).toList());
            case Pragma p -> new Pragma(p.key(), p.value(), replace(p.body(), old, neu));
            default -> s;
        };
    }

    private static For firstFor(Stmt s) {
        return switch (s) {
            case For f -> f.kind() == ForKind.SERIAL ? f : null;
            case Allocate a -> firstFor(a.body());
            case Let l -> firstFor(l.body());
            case Seq q -> q.stmts().isEmpty() ? null : firstFor(q.stmts().get(0));
            default -> null;
        };
    }

    private static Long slabOf(Expr idx, Var p, long extent, Buffer b) {
        Map<Var, Expr> zero = new HashMap<>();
        collectVars(idx, zero);
        Map<Var, Expr> m0 = new HashMap<>(zero);
        m0.put(p, IntImm.i32(0));
        Map<Var, Expr> m1 = new HashMap<>(zero);
        m1.put(p, IntImm.i32(1));
        Long a0 = eval(Exprs.substitute(idx, m0)), a1 = eval(Exprs.substitute(idx, m1));
        if (a0 == null || a1 == null) return null;
        long s = a1 - a0;
        long size = 1;
        for (Expr d : b.base().shape()) size *= ((IntImm) d).value();
        return s > 0 && s * extent == size ? s : null;
    }

    private static void collectVars(Expr e, Map<Var, Expr> m) {
        if (e instanceof Var v) m.put(v, IntImm.i32(0));
        for (Expr c : Exprs.children(e)) collectVars(c, m);
    }

    private static Long eval(Expr e) {
        return switch (e) {
            case IntImm i -> i.value();
            case dev.kiln.ir.Cast c -> eval(c.value());
            case Binary b -> {
                Long x = eval(b.a()), y = eval(b.b());
                if (x == null || y == null) yield null;
                yield switch (b.op()) {
                    case ADD -> x + y;
                    case SUB -> x - y;
                    case MUL -> x * y;
                    case FLOORDIV, DIV, TRUNCDIV -> Math.floorDiv(x, y);
                    case FLOORMOD, TRUNCMOD -> Math.floorMod(x, y);
                    case MIN -> Math.min(x, y);
                    case MAX -> Math.max(x, y);
                };
            }
            default -> null;
        };
    }

    private static void walkLoads(Stmt s, java.util.function.Consumer<BufferLoad> f) {
        switch (s) {
            case For x -> walkLoads(x.body(), f);
            case Allocate a -> walkLoads(a.body(), f);
            case Let l -> {
                exprLoads(l.value(), f);
                walkLoads(l.body(), f);
            }
            case Seq q -> q.stmts().forEach(c -> walkLoads(c, f));
            case Pragma p -> walkLoads(p.body(), f);
            case dev.kiln.tir.Store st -> {
                exprLoads(st.value(), f);
                st.indices().forEach(i -> exprLoads(i, f));
            }
            case dev.kiln.tir.IfThenElse i -> {
                exprLoads(i.cond(), f);
                walkLoads(i.then(), f);
                if (i.otherwise() != null) walkLoads(i.otherwise(), f);
            }
            case Evaluate ev -> exprLoads(ev.value(), f);
            default -> {}
        }
    }

    private static void exprLoads(Expr e, java.util.function.Consumer<BufferLoad> f) {
        if (e instanceof BufferLoad l) f.accept(l);
        for (Expr c : Exprs.children(e)) exprLoads(c, f);
    }
}
