package dev.kiln.tir.json;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Reducer;
import dev.kiln.ir.Select;
import dev.kiln.ir.TensorRead;
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
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes a {@link PrimFunc} in the form {@link PrimFuncJson} describes. The nodes:
 *
 * <pre>
 * ["int", dtype, value]            ["float", dtype, value]         ["var", symbol]
 * ["bin", op, a, b]                ["cmp", op, a, b]               ["and", a, b]  ["or", a, b]  ["not", a]
 * ["select", cond, t, f]           ["cast", dtype, value]          ["call", fn, [args]]
 * ["load", buffer, [indices]]      ["reduce", reducer, [sources], [axis symbols], condition, valueIndex]
 *
 * ["for", var, min, extent, kind, threadTag or null, body]          ["store", buffer, [indices], value]
 * ["allocate", buffer, body]       ["seq", [stmts]]                ["if", cond, then, else or null]
 * ["let", var, value, body]        ["eval", expr]                  ["pragma", key, value, body]  ["barrier"]
 * </pre>
 *
 * Operators, kinds and scopes are written in lower case ({@code "add"}, {@code "parallel"},
 * {@code "shared"}); dtypes by their display names ({@code "float32"}).
 */
final class PrimFuncWriter {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private final Map<Object, Integer> ids = new IdentityHashMap<>();
    private final ArrayNode symbols = F.arrayNode();
    private final String function;

    private PrimFuncWriter(String function) {
        this.function = function;
    }

    static ObjectNode write(PrimFunc f) {
        PrimFuncWriter w = new PrimFuncWriter(f.name());
        ArrayNode params = F.arrayNode();
        for (Buffer b : f.params()) params.add(w.buffer(b));
        ArrayNode body = w.stmt(f.body());
        ObjectNode o = F.objectNode();
        o.put("format", PrimFuncJson.FORMAT);
        o.put("name", f.name());
        o.set("symbols", w.symbols);
        o.set("params", params);
        o.set("body", body);
        return o;
    }

    static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }

    // ---- symbols: defined once, after everything their definition refers to ----------------

    private int define(Object key, ObjectNode def) {
        int id = symbols.size();
        symbols.add(def);
        ids.put(key, id);
        return id;
    }

    private int var(Var v) {
        Integer id = ids.get(v);
        if (id != null) return id;
        ObjectNode d = F.objectNode();
        if (v instanceof IterVar iv) {
            ArrayNode min = expr(iv.dom().min()), extent = expr(iv.dom().extent());
            d.put("sym", "itervar").put("name", iv.name()).put("kind", lower(iv.kind()));
            d.set("min", min);
            d.set("extent", extent);
        } else {
            d.put("sym", "var").put("name", v.name()).put("dtype", v.dtype().displayName());
        }
        return define(v, d);
    }

    private int buffer(Buffer b) {
        Integer id = ids.get(b);
        if (id != null) return id;
        ObjectNode d = F.objectNode();
        if (b.isView()) {
            int base = buffer(b.base());
            d.put("sym", "view").put("of", base).put("name", b.name());
            d.set("shape", exprs(b.shape()));
        } else {
            ArrayNode shape = exprs(b.shape()), strides = exprs(b.strides());
            d.put("sym", "buffer")
                    .put("name", b.name())
                    .put("dtype", b.dtype().displayName())
                    .put("scope", lower(b.scope()));
            d.set("shape", shape);
            d.set("strides", strides);
        }
        return define(b, d);
    }

    private int reducer(Reducer r) {
        Integer id = ids.get(r);
        if (id != null) return id;
        ArrayNode lhs = F.arrayNode(), rhs = F.arrayNode();
        for (Var v : r.lhs()) lhs.add(var(v));
        for (Var v : r.rhs()) rhs.add(var(v));
        ArrayNode results = exprs(r.results()), identities = exprs(r.identities());
        ObjectNode d = F.objectNode();
        d.put("sym", "reducer").put("name", r.name());
        d.set("lhs", lhs);
        d.set("rhs", rhs);
        d.set("results", results);
        d.set("identities", identities);
        return define(r, d);
    }

    // ---- expressions --------------------------------------------------------------------------

    private ArrayNode exprs(List<? extends Expr> es) {
        ArrayNode a = F.arrayNode();
        for (Expr e : es) a.add(expr(e));
        return a;
    }

    ArrayNode expr(Expr e) {
        ArrayNode a = F.arrayNode();
        switch (e) {
            case IntImm c -> a.add("int").add(c.dtype().displayName()).add(c.value());
            case FloatImm c -> {
                a.add("float").add(c.dtype().displayName());
                double v = c.value();
                if (Double.isFinite(v)) a.add(v);
                else a.add(Double.toString(v));
            }
            case Var v -> a.add("var").add(var(v));
            case Binary b -> a.add("bin").add(lower(b.op())).add(expr(b.a())).add(expr(b.b()));
            case Compare c -> a.add("cmp").add(lower(c.op())).add(expr(c.a())).add(expr(c.b()));
            case And x -> a.add("and").add(expr(x.a())).add(expr(x.b()));
            case Or x -> a.add("or").add(expr(x.a())).add(expr(x.b()));
            case Not x -> a.add("not").add(expr(x.a()));
            case Select s ->
                a.add("select").add(expr(s.cond())).add(expr(s.t())).add(expr(s.f()));
            case Cast c -> a.add("cast").add(c.dtype().displayName()).add(expr(c.value()));
            case Call c -> a.add("call").add(lower(c.fn())).add(exprs(c.args()));
            case BufferLoad l -> a.add("load").add(buffer(l.buffer())).add(exprs(l.indices()));
            case Reduce r -> {
                int red = reducer(r.reducer());
                ArrayNode axes = F.arrayNode();
                for (IterVar v : r.axes()) axes.add(var(v));
                a.add("reduce")
                        .add(red)
                        .add(exprs(r.sources()))
                        .add(axes)
                        .add(expr(r.condition()))
                        .add(r.valueIndex());
            }
            case TensorRead t ->
                throw new KilnException("function '" + function + "' reads tensor '"
                        + t.tensor().name() + "' of the DSL (" + t
                        + "); lower it to buffer loads before writing it as JSON");
        }
        return a;
    }

    // ---- statements ---------------------------------------------------------------------------

    ArrayNode stmt(Stmt s) {
        ArrayNode a = F.arrayNode();
        switch (s) {
            case For f -> {
                a.add("for")
                        .add(var(f.var()))
                        .add(expr(f.min()))
                        .add(expr(f.extent()))
                        .add(lower(f.kind()));
                if (f.thread() == null) a.addNull();
                else a.add(f.thread().tag());
                a.add(stmt(f.body()));
            }
            case Store st ->
                a.add("store").add(buffer(st.buffer())).add(exprs(st.indices())).add(expr(st.value()));
            case Allocate al -> a.add("allocate").add(buffer(al.buffer())).add(stmt(al.body()));
            case Seq q -> {
                ArrayNode list = F.arrayNode();
                for (Stmt c : q.stmts()) list.add(stmt(c));
                a.add("seq").add(list);
            }
            case IfThenElse i -> {
                a.add("if").add(expr(i.cond())).add(stmt(i.then()));
                if (i.otherwise() == null) a.addNull();
                else a.add(stmt(i.otherwise()));
            }
            case Let l -> a.add("let").add(var(l.var())).add(expr(l.value())).add(stmt(l.body()));
            case Evaluate e -> a.add("eval").add(expr(e.value()));
            case Pragma p -> a.add("pragma").add(p.key()).add(p.value()).add(stmt(p.body()));
            case Barrier b -> a.add("barrier");
        }
        return a;
    }
}
