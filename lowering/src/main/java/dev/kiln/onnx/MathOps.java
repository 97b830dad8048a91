package dev.kiln.onnx;

import dev.kiln.graph.Op;
import dev.kiln.graph.Op.BinaryKind;
import dev.kiln.graph.Op.UnaryKind;
import dev.kiln.graph.Value;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.Ref.ConstRef;
import dev.kiln.onnx.Ref.ValueRef;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;

/** Elementwise operators: activations, clip, and the broadcasting binary operators. */
final class MathOps {
    private MathOps() {}

    /** The comparison and logical operators, which give bool. */
    static final Map<String, BinaryKind> LOGIC = Map.of(
            "Equal", BinaryKind.EQUAL,
            "Less", BinaryKind.LESS,
            "LessOrEqual", BinaryKind.LESS_EQUAL,
            "Greater", BinaryKind.GREATER,
            "GreaterOrEqual", BinaryKind.GREATER_EQUAL,
            "And", BinaryKind.AND,
            "Or", BinaryKind.OR,
            "Xor", BinaryKind.XOR);

    static void unary(ImportContext ctx, NodeProto n) {
        boolean gelu = n.getOpType().equals("Gelu");
        Attrs a = new Attrs(n, gelu ? Set.of("approximate") : Set.of());
        UnaryKind k =
                switch (n.getOpType()) {
                    case "Relu" -> UnaryKind.RELU;
                    case "Sigmoid" -> UnaryKind.SIGMOID;
                    case "Tanh" -> UnaryKind.TANH;
                    case "Erf" -> UnaryKind.ERF;
                    case "Sqrt" -> UnaryKind.SQRT;
                    case "Not" -> UnaryKind.NOT;
                    case "Gelu" ->
                        switch (a.getString("approximate", "none")) {
                            case "none" -> UnaryKind.GELU;
                            case "tanh" -> UnaryKind.GELU_TANH;
                            default ->
                                throw new KilnException("attribute 'approximate' = '" + a.getString("approximate", "")
                                        + "' is not none or tanh");
                        };
                    default -> throw new IllegalStateException(n.getOpType());
                };
        elementwise(ctx, n, new Op.Unary(k));
    }

    static void clip(ImportContext ctx, NodeProto n) {
        new Attrs(n, Set.of());
        double lo = ctx.input(n, 1) == null
                ? -Float.MAX_VALUE
                : ctx.constant(n, 1, "min").scalar("min");
        double hi = ctx.input(n, 2) == null
                ? Float.MAX_VALUE
                : ctx.constant(n, 2, "max").scalar("max");
        elementwise(ctx, n, new Op.Clip(lo, hi));
    }

    /** A one-input elementwise op, computed in whatever layout its input has. */
    private static void elementwise(ImportContext ctx, NodeProto n, Op op) {
        Ref x = ctx.required(n, 0);
        if (ImportContext.isView(x)) {
            ctx.emitView(n.getOutput(0), op, x.shape(), ((ValueRef) x).value());
            return;
        }
        int[] layout = ImportContext.layoutOf(x);
        ctx.emit(n.getOutput(0), op, layout, ctx.inLayout(x, layout));
    }

    static void binary(ImportContext ctx, NodeProto n) {
        new Attrs(n, Set.of());
        if (n.getInputCount() != 2) throw new KilnException("takes 2 inputs here, got " + n.getInputCount());
        Ref a = ctx.required(n, 0), b = ctx.required(n, 1);
        if (a instanceof ConstRef ca && b instanceof ConstRef cb) {
            ctx.fold(n.getOutput(0), ConstEval.binary(n.getOpType(), ca.c(), cb.c()));
            return;
        }
        BinaryKind k = LOGIC.containsKey(n.getOpType())
                ? LOGIC.get(n.getOpType())
                : switch (n.getOpType()) {
                    case "Add" -> BinaryKind.ADD;
                    case "Sub" -> BinaryKind.SUBTRACT;
                    case "Mul" -> BinaryKind.MULTIPLY;
                    case "Div" -> BinaryKind.DIVIDE;
                    case "Pow" -> BinaryKind.POWER;
                    case "Max" -> BinaryKind.MAXIMUM;
                    case "Min" -> BinaryKind.MINIMUM;
                    default -> throw new IllegalStateException(n.getOpType());
                };
        if (k == BinaryKind.POWER && b instanceof ConstRef e && e.c().size() == 1 && b.rank() <= a.rank()) {
            double p = e.c().get(0);
            if (p == 1) {
                ctx.define(n.getOutput(0), a);
                return;
            }
            if (p == 0.5) {
                elementwise(ctx, n, new Op.Unary(UnaryKind.SQRT));
                return;
            }
            if (p == 2 && ImportContext.isView(a)) {
                Value x = ((ValueRef) a).value();
                ctx.emitView(n.getOutput(0), new Op.Binary(BinaryKind.MULTIPLY), a.shape(), x, x);
                return;
            }
            if (p == 2) { // x * x: exact, and cheaper than pow
                int[] layout = ImportContext.layoutOf(a);
                Value x = ctx.inLayout(a, layout);
                ctx.emit(n.getOutput(0), new Op.Binary(BinaryKind.MULTIPLY), layout, x, x);
                return;
            }
        }
        if (onView(ctx, n, new Op.Binary(k), a, b)) return;
        int rank = Math.max(a.rank(), b.rank());
        boolean image = rank == 4 && (ImportContext.isNhwc(a) || ImportContext.isNhwc(b));
        int[] layout = image ? ImportContext.NHWC : ImportContext.identity(rank);
        Value av = image ? ctx.inLayout(toRank(ctx, a, rank), layout) : ctx.plain(a);
        Value bv = image ? ctx.inLayout(toRank(ctx, b, rank), layout) : ctx.plain(b);
        ctx.emit(n.getOutput(0), new Op.Binary(k), layout, av, bv);
    }

    /**
     * A binary op on a view (see {@link ImportContext#emitView}) computed on the view's own shape when
     * the other operand lines up with it: a constant broadcast along trailing axes the two shapes
     * share (a bias), a value of the same ONNX shape (viewed the same way), or a computed value of one element.
     * Returns false when it does not apply.
     */
    private static boolean onView(ImportContext ctx, NodeProto n, Op op, Ref a, Ref b) {
        ValueRef view = ImportContext.isView(a) ? (ValueRef) a : ImportContext.isView(b) ? (ValueRef) b : null;
        if (view == null) return false;
        Ref other = view == a ? b : a;
        long[] ld = view.shape(), kd = view.value().dims();
        if (!Arrays.equals(ConstEval.broadcastShape(ld, other.shape(), n.getOpType()), ld)) return false;
        Value ov = null;
        if (other instanceof ConstRef c) {
            long[] os = c.shape();
            int lead = 0;
            while (lead < os.length - 1 && os[lead] == 1) lead++;
            long[] trimmed = Arrays.copyOfRange(os, lead, os.length);
            int t = trimmed.length;
            if (t <= kd.length
                    && t <= ld.length
                    && Arrays.equals(
                            Arrays.copyOfRange(kd, kd.length - t, kd.length),
                            Arrays.copyOfRange(ld, ld.length - t, ld.length))) {
                ov = ctx.asShape(c, trimmed.length == 0 ? new long[] {1} : trimmed);
            }
        } else if (other instanceof ValueRef o && o.layout() == null && Arrays.equals(other.shape(), ld)) {
            ov = ctx.asShape(o, kd); // the same elements in the same order: a view of the other operand too
        } else if (other instanceof ValueRef o && Const.count(o.shape()) == 1) {
            ov = ctx.asShape(o, 1); // one computed value (a dynamic quantisation's scale): broadcast as it is
        }
        if (ov == null) return false;
        Value x = view.value();
        ctx.emitView(n.getOutput(0), op, ld, view == a ? x : ov, view == a ? ov : x);
        return true;
    }

    /** {@code r} with leading unit axes up to {@code rank} (numpy broadcasting, made explicit for a reorder). */
    static Ref toRank(ImportContext ctx, Ref r, int rank) {
        if (r.rank() == rank) return r;
        long[] s = new long[rank];
        Arrays.fill(s, 1);
        System.arraycopy(r.shape(), 0, s, rank - r.rank(), r.rank());
        if (r instanceof ConstRef c) return new ConstRef(c.c().reshape(s));
        Value v = ctx.g.node(
                ctx.fresh(((ValueRef) r).value().name() + "/rank" + rank),
                new Op.Reshape(Arrays.stream(s).boxed().toList()),
                ctx.plain(r));
        return new ValueRef(v, s, null);
    }
}
