package dev.kiln.te;

import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Reducer;
import dev.kiln.ir.Select;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The structural workload key of a DAG: a SHA-256 over a canonical text of the graph in which
 * tensors are numbered by topological position and variables by first appearance, so names do
 * not matter but shapes, dtypes, constants and expressions do.
 */
final class WorkloadKey {
    private final Map<Operation, Integer> opIndex = new IdentityHashMap<>();
    private final Map<Var, String> varNames = new IdentityHashMap<>();
    private final StringBuilder sb = new StringBuilder();

    private WorkloadKey() {}

    static String of(ComputeDAG dag) {
        String canonical = canonical(dag);
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8));
            return "kiln-" + HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    /** The canonical text the key hashes; useful to see why two keys differ. */
    public static String canonical(ComputeDAG dag) {
        WorkloadKey w = new WorkloadKey();
        for (Operation op : dag.ops()) w.opIndex.put(op, w.opIndex.size());
        for (Operation op : dag.ops()) w.op(op);
        w.sb.append("out");
        for (Tensor t : dag.outputs()) w.sb.append(' ').append(w.tensor(t));
        return w.sb.toString();
    }

    private void op(Operation op) {
        switch (op) {
            case PlaceholderOp p ->
                sb.append("P ")
                        .append(p.output(0).dtype())
                        .append(p.output(0).shape())
                        .append('\n');
            case ComputeOp c -> {
                sb.append("C");
                for (IterVar a : c.axes())
                    sb.append(' ').append(var(a)).append(':').append(a.extent());
                if (c.body() instanceof Reduce r) {
                    for (IterVar a : r.axes()) {
                        sb.append(' ').append(var(a)).append(":r[");
                        expr(a.dom().min());
                        sb.append(',');
                        expr(a.dom().extent());
                        sb.append(']');
                    }
                }
                sb.append(" =");
                for (Expr b : c.bodies()) {
                    sb.append(' ');
                    expr(b);
                }
                sb.append('\n');
            }
        }
    }

    private String tensor(Tensor t) {
        return "t" + opIndex.get(t.op()) + "." + t.valueIndex();
    }

    private String var(Var v) {
        return varNames.computeIfAbsent(v, x -> "v" + varNames.size()) + ":" + v.dtype();
    }

    private void expr(Expr e) {
        switch (e) {
            case IntImm c -> sb.append(c.dtype()).append('(').append(c.value()).append(')');
            case FloatImm c ->
                sb.append(c.dtype())
                        .append('(')
                        .append(Double.doubleToLongBits(c.value()))
                        .append(')');
            case Var v -> sb.append(var(v));
            case Binary b -> node(b.op().name(), b.a(), b.b());
            case Compare c -> node(c.op().name(), c.a(), c.b());
            case And a -> node("AND", a.a(), a.b());
            case Or o -> node("OR", o.a(), o.b());
            case Not n -> node("NOT", n.a());
            case Select s -> node("SELECT", s.cond(), s.t(), s.f());
            case Cast c -> node("CAST_" + c.dtype(), c.value());
            case Call c -> node(c.fn().name(), c.args().toArray(Expr[]::new));
            case TensorRead r ->
                node("READ_" + tensor(Tensor.of(r)), r.indices().toArray(Expr[]::new));
            case BufferLoad l -> throw new IllegalStateException("a DSL body cannot load a buffer: " + l);
            case Reduce r -> {
                sb.append("REDUCE[");
                reducer(r.reducer());
                sb.append(" axes");
                for (IterVar a : r.axes()) sb.append(' ').append(var(a));
                sb.append(" value ").append(r.valueIndex()).append(" where ");
                expr(r.condition());
                sb.append(" of");
                for (Expr s : r.sources()) {
                    sb.append(' ');
                    expr(s);
                }
                sb.append(']');
            }
        }
    }

    private void reducer(Reducer r) {
        sb.append("combiner");
        for (Var v : r.lhs()) sb.append(' ').append(var(v));
        for (Var v : r.rhs()) sb.append(' ').append(var(v));
        for (Expr e : r.results()) {
            sb.append(' ');
            expr(e);
        }
        sb.append(" identity");
        for (Expr e : r.identities()) {
            sb.append(' ');
            expr(e);
        }
    }

    private void node(String name, Expr... kids) {
        sb.append(name).append('(');
        for (int i = 0; i < kids.length; i++) {
            if (i > 0) sb.append(',');
            expr(kids[i]);
        }
        sb.append(')');
    }
}
