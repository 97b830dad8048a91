package dev.kiln.tir.json;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.CompareOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Intrinsic;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Range;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Reducer;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import dev.kiln.tir.ThreadAxis;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Reads the form {@link PrimFuncWriter} writes. Node constructors re-check every type rule, so a
 * document that decodes is a valid program; anything malformed throws a {@link KilnException}
 * that says what was expected and where.
 */
final class PrimFuncReader {
    private final List<Object> symbols = new ArrayList<>();
    private String function = "?";

    private PrimFuncReader() {}

    static PrimFunc read(JsonNode o) {
        PrimFuncReader r = new PrimFuncReader();
        if (o == null || !o.isObject())
            throw new KilnException("a " + PrimFuncJson.FORMAT + " document is a JSON object");
        String format = o.path("format").asText();
        if (!PrimFuncJson.FORMAT.equals(format)) {
            throw new KilnException("expected format '" + PrimFuncJson.FORMAT + "', got '" + format + "'");
        }
        r.function = text(o.get("name"), "function name");
        int i = 0;
        for (JsonNode d : array(o.get("symbols"), "symbols")) r.symbols.add(r.symbol(d, i++));
        List<Buffer> params = new ArrayList<>();
        for (JsonNode p : array(o.get("params"), "params")) params.add(r.buffer(p));
        return new PrimFunc(r.function, params, r.stmt(o.get("body")));
    }

    // ---- symbols ------------------------------------------------------------------------------

    private Object symbol(JsonNode d, int index) {
        if (d == null || !d.isObject()) throw bad("symbol " + index, d);
        String sym = d.path("sym").asText();
        String name = text(d.get("name"), "name of symbol " + index);
        return switch (sym) {
            case "var" -> new Var(name, dtype(d.get("dtype")));
            case "itervar" ->
                new IterVar(
                        name,
                        new Range(expr(d.get("min")), expr(d.get("extent"))),
                        enumOf(IterVar.Kind.class, d.get("kind"), "axis kind"));
            case "buffer" ->
                new Buffer(
                        name,
                        dtype(d.get("dtype")),
                        exprs(d.get("shape")),
                        exprs(d.get("strides")),
                        enumOf(MemoryScope.class, d.get("scope"), "memory scope"));
            case "view" -> {
                Buffer view = buffer(d.get("of")).flatView();
                List<Expr> shape = exprs(d.get("shape"));
                if (!view.name().equals(name) || !view.shape().equals(shape)) {
                    throw new KilnException("function '" + function + "': symbol " + index + " is a view '" + name
                            + "' of shape " + shape + ", but the flat view of its base is '" + view.name()
                            + "' of shape "
                            + view.shape());
                }
                yield view;
            }
            case "reducer" -> {
                List<Var> lhs = new ArrayList<>(), rhs = new ArrayList<>();
                for (JsonNode v : array(d.get("lhs"), "reducer lhs")) lhs.add(var(v));
                for (JsonNode v : array(d.get("rhs"), "reducer rhs")) rhs.add(var(v));
                yield new Reducer(name, lhs, rhs, exprs(d.get("results")), exprs(d.get("identities")));
            }
            default ->
                throw new KilnException("function '" + function + "': symbol " + index + " has unknown kind '" + sym
                        + "' (known: var, itervar, buffer, view, reducer)");
        };
    }

    private <T> T ref(JsonNode n, Class<T> type, String what) {
        if (n == null || !n.canConvertToInt()) throw bad(what + " symbol", n);
        int id = n.asInt();
        if (id < 0 || id >= symbols.size()) {
            throw new KilnException("function '" + function + "' refers to " + what + " symbol " + id + ", but only "
                    + symbols.size() + " are defined before it");
        }
        Object o = symbols.get(id);
        if (!type.isInstance(o)) {
            throw new KilnException("function '" + function + "': symbol " + id + " is a "
                    + o.getClass().getSimpleName() + ", not a " + what);
        }
        return type.cast(o);
    }

    private Var var(JsonNode n) {
        return ref(n, Var.class, "variable");
    }

    private Buffer buffer(JsonNode n) {
        return ref(n, Buffer.class, "buffer");
    }

    // ---- expressions --------------------------------------------------------------------------

    private List<Expr> exprs(JsonNode n) {
        List<Expr> out = new ArrayList<>();
        for (JsonNode e : array(n, "expression list")) out.add(expr(e));
        return out;
    }

    private Expr expr(JsonNode n) {
        if (n == null || !n.isArray() || n.isEmpty()) throw bad("expression", n);
        String k = n.get(0).asText();
        return switch (k) {
            case "int" -> {
                JsonNode v = arg(n, 2);
                if (!v.isIntegralNumber() || !v.canConvertToLong()) throw bad("integer constant", v);
                yield new IntImm(dtype(arg(n, 1)), v.asLong());
            }
            case "float" -> new FloatImm(dtype(arg(n, 1)), floatValue(arg(n, 2)));
            case "var" -> var(arg(n, 1));
            case "bin" ->
                new Binary(enumOf(BinaryOp.class, arg(n, 1), "binary operator"), expr(arg(n, 2)), expr(arg(n, 3)));
            case "cmp" ->
                new Compare(enumOf(CompareOp.class, arg(n, 1), "comparison"), expr(arg(n, 2)), expr(arg(n, 3)));
            case "and" -> new And(expr(arg(n, 1)), expr(arg(n, 2)));
            case "or" -> new Or(expr(arg(n, 1)), expr(arg(n, 2)));
            case "not" -> new Not(expr(arg(n, 1)));
            case "select" -> new Select(expr(arg(n, 1)), expr(arg(n, 2)), expr(arg(n, 3)));
            case "cast" -> new Cast(dtype(arg(n, 1)), expr(arg(n, 2)));
            case "call" -> new Call(enumOf(Intrinsic.class, arg(n, 1), "intrinsic"), exprs(arg(n, 2)));
            case "load" -> new BufferLoad(buffer(arg(n, 1)), exprs(arg(n, 2)));
            case "reduce" -> {
                Reducer r = ref(arg(n, 1), Reducer.class, "reducer");
                List<IterVar> axes = new ArrayList<>();
                for (JsonNode a : array(arg(n, 3), "reduce axes")) axes.add(ref(a, IterVar.class, "reduce axis"));
                JsonNode vi = arg(n, 5);
                if (!vi.canConvertToInt()) throw bad("value index", vi);
                yield new Reduce(r, exprs(arg(n, 2)), axes, expr(arg(n, 4)), vi.asInt());
            }
            default ->
                throw new KilnException("function '" + function + "': unknown expression node '" + k + "' in " + n);
        };
    }

    private double floatValue(JsonNode v) {
        if (v.isNumber()) return v.asDouble();
        if (v.isTextual()) {
            switch (v.asText()) {
                case "NaN":
                    return Double.NaN;
                case "Infinity":
                    return Double.POSITIVE_INFINITY;
                case "-Infinity":
                    return Double.NEGATIVE_INFINITY;
                default:
                    break;
            }
        }
        throw bad("floating constant", v);
    }

    // ---- statements ---------------------------------------------------------------------------

    private Stmt stmt(JsonNode n) {
        if (n == null || !n.isArray() || n.isEmpty()) throw bad("statement", n);
        String k = n.get(0).asText();
        return switch (k) {
            case "for" -> {
                JsonNode thread = arg(n, 5);
                yield new For(
                        var(arg(n, 1)),
                        expr(arg(n, 2)),
                        expr(arg(n, 3)),
                        enumOf(ForKind.class, arg(n, 4), "loop kind"),
                        thread.isNull() ? null : ThreadAxis.parse(thread.asText()),
                        stmt(arg(n, 6)));
            }
            case "store" -> new Store(buffer(arg(n, 1)), exprs(arg(n, 2)), expr(arg(n, 3)));
            case "allocate" -> new Allocate(buffer(arg(n, 1)), stmt(arg(n, 2)));
            case "seq" -> {
                List<Stmt> list = new ArrayList<>();
                for (JsonNode c : array(arg(n, 1), "sequence")) list.add(stmt(c));
                yield new Seq(list);
            }
            case "if" -> {
                JsonNode otherwise = arg(n, 3);
                yield new IfThenElse(expr(arg(n, 1)), stmt(arg(n, 2)), otherwise.isNull() ? null : stmt(otherwise));
            }
            case "let" -> new Let(var(arg(n, 1)), expr(arg(n, 2)), stmt(arg(n, 3)));
            case "eval" -> new Evaluate(expr(arg(n, 1)));
            case "pragma" -> {
                JsonNode v = arg(n, 2);
                if (!v.isIntegralNumber()) throw bad("pragma value", v);
                yield new Pragma(text(arg(n, 1), "pragma key"), v.asLong(), stmt(arg(n, 3)));
            }
            case "barrier" -> new Barrier();
            default -> throw new KilnException("function '" + function + "': unknown statement node '" + k + "'");
        };
    }

    // ---- helpers ------------------------------------------------------------------------------

    private JsonNode arg(JsonNode n, int i) {
        JsonNode a = n.get(i);
        if (a == null) {
            throw new KilnException("function '" + function + "': node '"
                    + n.get(0).asText() + "' lacks field " + i + " in " + abbreviate(n));
        }
        return a;
    }

    private static Iterable<JsonNode> array(JsonNode n, String what) {
        if (n == null || !n.isArray())
            throw new KilnException("expected a JSON array of " + what + ", got " + abbreviate(n));
        return n;
    }

    private static String text(JsonNode n, String what) {
        if (n == null || !n.isTextual())
            throw new KilnException("expected a string for the " + what + ", got " + abbreviate(n));
        return n.asText();
    }

    private static DType dtype(JsonNode n) {
        return DType.parse(text(n, "dtype"));
    }

    private static <E extends Enum<E>> E enumOf(Class<E> type, JsonNode n, String what) {
        String s = text(n, what);
        for (E e : type.getEnumConstants())
            if (e.name().toLowerCase(Locale.ROOT).equals(s)) return e;
        throw new KilnException("unknown " + what + " '" + s + "'");
    }

    private KilnException bad(String what, JsonNode n) {
        return new KilnException("function '" + function + "': malformed " + what + ": " + abbreviate(n));
    }

    private static String abbreviate(JsonNode n) {
        String s = String.valueOf(n);
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }
}
