package dev.kiln.lower;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprRewriter;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Reducer;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import dev.kiln.te.PlaceholderOp;
import dev.kiln.te.Tensor;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.For;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The default lowering of a computation, before any schedule: every operation is computed at
 * root, in topological order, over its own loop nest; intermediates are allocated for the whole
 * function; a reduction initialises its output to the reducer's identity and then updates it
 * over the reduce loops.
 *
 * <pre>
 * for i, j:                 # spatial axes
 *   C[i, j] = identity
 *   for k:                  # reduce axes
 *     if cond:              # only when the reduction has a condition
 *       C[i, j] = combine(C[i, j], source)
 * </pre>
 */
public final class LowerDefault {
    private final Map<Tensor, Buffer> buffers = new IdentityHashMap<>();
    private final Set<String> usedNames = new HashSet<>();

    private LowerDefault() {}

    /** Lowers a DAG; the parameters are its inputs, then its outputs ({@link ComputeDAG#arguments()}). */
    public static PrimFunc lower(String name, ComputeDAG dag) {
        return lower(name, dag, dag.arguments());
    }

    /**
     * Lowers the computation of the compute tensors among {@code args}, with {@code args} as the
     * parameters in that order. Every placeholder the computation reads must be among them.
     */
    public static PrimFunc lower(String name, List<Tensor> args) {
        List<Tensor> outs = args.stream().filter(t -> !t.isPlaceholder()).toList();
        if (outs.isEmpty()) throw new KilnException("function '" + name + "': no compute tensor among the arguments " + args);
        return lower(name, new ComputeDAG(outs), args);
    }

    private static PrimFunc lower(String name, ComputeDAG dag, List<Tensor> args) {
        if (new LinkedHashSet<>(args).size() != args.size()) {
            throw new KilnException("function '" + name + "': a tensor is listed twice among the arguments " + args);
        }
        LowerDefault l = new LowerDefault();
        List<Buffer> params = new ArrayList<>();
        for (Tensor t : args) params.add(l.bufferFor(t, MemoryScope.GLOBAL));
        for (Tensor in : dag.inputs()) {
            if (!l.buffers.containsKey(in)) {
                throw new KilnException("function '" + name + "': placeholder '" + in.name()
                        + "' is read but is not among the arguments " + args);
            }
        }
        List<Buffer> allocs = new ArrayList<>();
        List<Stmt> stages = new ArrayList<>();
        for (Operation op : dag.ops()) {
            if (op instanceof ComputeOp c) {
                for (Tensor t : c.outputs()) {
                    if (!l.buffers.containsKey(t)) allocs.add(l.bufferFor(t, MemoryScope.GLOBAL));
                }
                stages.add(l.lowerOp(c));
            } else if (op instanceof PlaceholderOp) {
                // inputs are parameters
            }
        }
        Stmt body = Seq.of(stages);
        for (int i = allocs.size() - 1; i >= 0; i--) body = new Allocate(allocs.get(i), body);
        return new PrimFunc(name, params, body);
    }

    private Buffer bufferFor(Tensor t, MemoryScope scope) {
        return buffers.computeIfAbsent(t, x -> Buffer.rowMajor(uniqueName(x.name()), x.dtype(), x.shape().dims(), scope));
    }

    private String uniqueName(String base) {
        String n = base;
        for (int k = 1; !usedNames.add(n); k++) n = base + "_" + k;
        return n;
    }

    private Stmt lowerOp(ComputeOp op) {
        Map<Var, Expr> loopVars = new IdentityHashMap<>();
        List<Var> spatial = new ArrayList<>();
        for (IterVar a : op.axes()) {
            Var v = new Var(a.name(), a.dtype());
            loopVars.put(a, v);
            spatial.add(v);
        }
        List<Expr> idx = new ArrayList<>(spatial);
        List<Buffer> outs = op.outputs().stream().map(buffers::get).toList();
        Stmt inner;
        if (op.body() instanceof Reduce r) {
            inner = lowerReduction(r, outs, idx, loopVars);
        } else {
            List<Stmt> stores = new ArrayList<>();
            for (int v = 0; v < outs.size(); v++) {
                stores.add(new Store(outs.get(v), idx, convert(op.bodies().get(v), loopVars)));
            }
            inner = Seq.of(stores);
        }
        for (int d = op.axes().size() - 1; d >= 0; d--) {
            IterVar a = op.axes().get(d);
            inner = For.serial((Var) loopVars.get(a), a.dom().min(), a.dom().extent(), inner);
        }
        return inner;
    }

    private Stmt lowerReduction(Reduce r, List<Buffer> outs, List<Expr> idx, Map<Var, Expr> loopVars) {
        Reducer red = r.reducer();
        List<Stmt> init = new ArrayList<>();
        for (int v = 0; v < outs.size(); v++) init.add(new Store(outs.get(v), idx, red.identities().get(v)));
        for (IterVar a : r.axes()) loopVars.put(a, new Var(a.name(), a.dtype()));

        Stmt update;
        if (red.arity() == 1) {
            Expr acc = new dev.kiln.ir.BufferLoad(outs.get(0), idx);
            Expr src = convert(r.sources().get(0), loopVars);
            Expr combined = Exprs.substitute(red.results().get(0), Map.of(red.lhs().get(0), acc, red.rhs().get(0), src));
            update = new Store(outs.get(0), idx, combined);
        } else {
            // let x_v = out_v[idx]; let y_v = source_v; let n_v = combine_v(x, y); then store every n_v.
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
            update = Seq.of(stores);
            for (int v = red.arity() - 1; v >= 0; v--) {
                update = new Let(ns.get(v), Exprs.substitute(red.results().get(v), args), update);
            }
            for (int v = red.arity() - 1; v >= 0; v--) {
                update = new Let(ys.get(v), convert(r.sources().get(v), loopVars), update);
            }
            for (int v = red.arity() - 1; v >= 0; v--) {
                update = new Let(xs.get(v), new dev.kiln.ir.BufferLoad(outs.get(v), idx), update);
            }
        }
        if (!(r.condition() instanceof IntImm c && c.value() == 1)) {
            update = IfThenElse.of(convert(r.condition(), loopVars), update);
        }
        for (int d = r.axes().size() - 1; d >= 0; d--) {
            IterVar a = r.axes().get(d);
            update = For.serial((Var) loopVars.get(a), a.dom().min(), a.dom().extent(), update);
        }
        init.add(update);
        return Seq.of(init);
    }

    /** Replaces axes by loop variables and tensor reads by buffer loads. */
    private Expr convert(Expr e, Map<Var, Expr> loopVars) {
        return new ExprRewriter() {
            @Override
            public Expr visit(Expr x) {
                if (x instanceof Var v) {
                    Expr r = loopVars.get(v);
                    if (r == null) throw new KilnException("variable '" + v.name() + "' is not bound in this computation");
                    return r;
                }
                if (x instanceof TensorRead t) {
                    Buffer b = buffers.get(t.tensor());
                    if (b == null) throw new KilnException("tensor '" + t.tensor().name() + "' has no buffer");
                    return new dev.kiln.ir.BufferLoad(b, visitAll(t.indices()));
                }
                return rewriteChildren(x);
            }
        }.visit(e);
    }
}
