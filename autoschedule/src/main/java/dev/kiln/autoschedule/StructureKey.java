package dev.kiln.autoschedule;

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
import dev.kiln.ir.Select;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import dev.kiln.te.PlaceholderOp;
import dev.kiln.te.Tensor;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The structural key of a task: its computation with the shapes abstracted, for schedule transfer between
 * the similar tasks of a network ({@link dev.kiln.autoschedule.transfer.ScheduleTransfer}). It is the workload
 * key's canonical text with every extent and integer constant replaced by {@code #} and every placeholder
 * reduced to its dtype and rank: the same operators in the same fusion pattern, the same stages with the
 * same numbers of space and reduction axes, the same dtypes and the same expression trees. Two conv2d + bias +
 * relu of different H/W/C (or strides, kernel sizes and paddings that keep the index expressions' form) share
 * a key; a conv and a dense do not (different stages and axes), nor a conv with and without its padding stage.
 * Steps name stages and loops by index, so a program of one task replays on another of the same key; only its
 * tile sizes need refitting. The target and the layout-free argument positions are part of the key.
 */
public final class StructureKey {
    private final Map<Operation, Integer> opIndex = new IdentityHashMap<>();
    private final Map<Var, String> varNames = new IdentityHashMap<>();
    private final StringBuilder sb = new StringBuilder();

    private StructureKey() {}

    /** The structural key of a task: {@code "struct-" + hex} over {@link #canonical}, the target and layout. */
    public static String of(SearchTask task) {
        String text =
                canonical(task.dag()) + "\ntarget " + task.targetDescription() + "\nlayout_free " + task.layoutFree();
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return "struct-" + HexFormat.of().formatHex(d, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    /** The canonical text of a DAG with its shapes and integer constants abstracted (see the class comment). */
    public static String canonical(ComputeDAG dag) {
        StructureKey k = new StructureKey();
        for (Operation op : dag.ops()) k.opIndex.put(op, k.opIndex.size());
        for (Operation op : dag.ops()) k.op(op);
        k.sb.append("out");
        for (Tensor t : dag.outputs()) k.sb.append(' ').append(k.tensor(t));
        return k.sb.toString();
    }

    private void op(Operation op) {
        switch (op) {
            case PlaceholderOp p -> {
                Tensor t = p.output(0);
                sb.append("P ")
                        .append(t.dtype())
                        .append(" rank ")
                        .append(t.shape().rank())
                        .append('\n');
            }
            case ComputeOp c -> {
                sb.append("C ").append(c.outputs().getFirst().dtype());
                for (IterVar a : c.axes()) sb.append(' ').append(var(a)).append(":#");
                if (c.body() instanceof Reduce r)
                    for (IterVar a : r.axes()) sb.append(' ').append(var(a)).append(":r");
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
            case IntImm c -> sb.append(c.dtype()).append("(#)");
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
                sb.append("REDUCE[")
                        .append(r.reducer().name())
                        .append('/')
                        .append(r.reducer().arity())
                        .append(" axes");
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

    private void node(String name, Expr... kids) {
        sb.append(name).append('(');
        for (int i = 0; i < kids.length; i++) {
            if (i > 0) sb.append(',');
            expr(kids[i]);
        }
        sb.append(')');
    }
}
