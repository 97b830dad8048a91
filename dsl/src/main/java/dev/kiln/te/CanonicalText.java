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
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The canonical text of a DAG, the one printer behind its keys: tensors are numbered by topological position and
 * variables by first appearance, so names do not matter but the stages, axes, dtypes and expression trees do.
 * {@link Mode#EXACT} keeps shapes, extents and integer constants (the text the {@linkplain ComputeDAG#workloadKey()
 * workload key} hashes); {@link Mode#STRUCTURE} abstracts them (the text of the auto-scheduler's structural key, which
 * similar tasks of other shapes share). Tuning logs on disk depend on both texts: a change to either changes keys.
 */
public final class CanonicalText {
    /** What the text keeps. */
    public enum Mode {
        /**
         * Everything: placeholders with their shapes, axes with their extents, reduction axes with their ranges,
         * integer constants with their values and reducers with their combiners and identities.
         */
        EXACT,
        /**
         * Shapes abstracted: every extent and integer constant is {@code #}, every placeholder is its dtype and rank,
         * a compute stage names its output dtype, and a reducer is its name and arity.
         */
        STRUCTURE
    }

    private final Mode mode;
    private final Map<Operation, Integer> opIndex = new IdentityHashMap<>();
    private final Map<Var, String> varNames = new IdentityHashMap<>();
    private final StringBuilder sb = new StringBuilder();

    private CanonicalText(Mode mode) {
        this.mode = Objects.requireNonNull(mode, "mode");
    }

    /** The canonical text of {@code dag} in this mode; useful to see why two keys differ. */
    public static String of(ComputeDAG dag, Mode mode) {
        CanonicalText w = new CanonicalText(mode);
        for (Operation op : dag.ops()) w.opIndex.put(op, w.opIndex.size());
        for (Operation op : dag.ops()) w.op(op);
        w.sb.append("out");
        for (Tensor t : dag.outputs()) w.sb.append(' ').append(w.tensor(t));
        return w.sb.toString();
    }

    /** {@code prefix} followed by the hex of the first 16 bytes of the SHA-256 of {@code text} (UTF-8). */
    public static String digest(String prefix, String text) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return prefix + HexFormat.of().formatHex(d, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    private boolean exact() {
        return mode == Mode.EXACT;
    }

    private void op(Operation op) {
        switch (op) {
            case PlaceholderOp p -> {
                Tensor t = p.output(0);
                sb.append("P ").append(t.dtype());
                if (exact()) sb.append(t.shape());
                else sb.append(" rank ").append(t.shape().rank());
                sb.append('\n');
            }
            case ComputeOp c -> {
                sb.append("C");
                if (!exact()) sb.append(' ').append(c.outputs().getFirst().dtype());
                for (IterVar a : c.axes()) {
                    sb.append(' ').append(var(a)).append(':');
                    if (exact()) sb.append(a.extent());
                    else sb.append('#');
                }
                if (c.body() instanceof Reduce r) {
                    for (IterVar a : r.axes()) reduceAxis(a);
                }
                sb.append(" =");
                spaced(c.bodies());
                sb.append('\n');
            }
        }
    }

    private void reduceAxis(IterVar a) {
        sb.append(' ').append(var(a)).append(":r");
        if (!exact()) return;
        sb.append('[');
        expr(a.dom().min());
        sb.append(',');
        expr(a.dom().extent());
        sb.append(']');
    }

    private String tensor(Tensor t) {
        return "t" + opIndex.get(t.op()) + "." + t.valueIndex();
    }

    private String var(Var v) {
        return varNames.computeIfAbsent(v, x -> "v" + varNames.size()) + ":" + v.dtype();
    }

    private void expr(Expr e) {
        switch (e) {
            case IntImm c -> {
                sb.append(c.dtype()).append('(');
                if (exact()) sb.append(c.value());
                else sb.append('#');
                sb.append(')');
            }
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
                spaced(r.sources());
                sb.append(']');
            }
        }
    }

    private void reducer(Reducer r) {
        if (!exact()) {
            sb.append(r.name()).append('/').append(r.arity());
            return;
        }
        sb.append("combiner");
        for (Var v : r.lhs()) sb.append(' ').append(var(v));
        for (Var v : r.rhs()) sb.append(' ').append(var(v));
        spaced(r.results());
        sb.append(" identity");
        spaced(r.identities());
    }

    /** Each of {@code es} after a space. */
    private void spaced(List<Expr> es) {
        for (Expr e : es) {
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
