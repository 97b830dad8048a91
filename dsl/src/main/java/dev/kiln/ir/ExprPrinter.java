package dev.kiln.ir;

import java.util.stream.Collectors;

/** Prints expressions as readable text: {@code (A[i, k] * B[k, j])}, {@code floordiv(i, 4)}. */
public final class ExprPrinter {
    private ExprPrinter() {}

    public static String print(Expr e) {
        StringBuilder sb = new StringBuilder();
        print(e, sb);
        return sb.toString();
    }

    static void print(Expr e, StringBuilder sb) {
        switch (e) {
            case IntImm c -> {
                if (c.dtype() == DType.BOOL) sb.append(c.value() != 0 ? "true" : "false");
                else if (c.dtype() == DType.INT32) sb.append(c.value());
                else sb.append(c.dtype()).append('(').append(c.value()).append(')');
            }
            case FloatImm c -> {
                String v = Double.isInfinite(c.value()) ? (c.value() > 0 ? "inf" : "-inf") : Double.toString(c.value());
                if (c.dtype() == DType.FLOAT32) sb.append(v).append('f');
                else sb.append(c.dtype()).append('(').append(v).append(')');
            }
            case Var v -> sb.append(v.name());
            case Binary b -> {
                if (b.op().infix()) {
                    sb.append('(');
                    print(b.a(), sb);
                    sb.append(' ').append(b.op().symbol()).append(' ');
                    print(b.b(), sb);
                    sb.append(')');
                } else {
                    sb.append(b.op().symbol()).append('(');
                    print(b.a(), sb);
                    sb.append(", ");
                    print(b.b(), sb);
                    sb.append(')');
                }
            }
            case Compare c -> {
                sb.append('(');
                print(c.a(), sb);
                sb.append(' ').append(c.op().symbol()).append(' ');
                print(c.b(), sb);
                sb.append(')');
            }
            case And a -> infix(sb, a.a(), "&&", a.b());
            case Or o -> infix(sb, o.a(), "||", o.b());
            case Not n -> {
                sb.append('!');
                print(n.a(), sb);
            }
            case Select s -> {
                sb.append("select(");
                print(s.cond(), sb);
                sb.append(", ");
                print(s.t(), sb);
                sb.append(", ");
                print(s.f(), sb);
                sb.append(')');
            }
            case Cast c -> {
                sb.append(c.dtype()).append('(');
                print(c.value(), sb);
                sb.append(')');
            }
            case Call c -> {
                sb.append(c.fn().displayName()).append('(');
                for (int i = 0; i < c.args().size(); i++) {
                    if (i > 0) sb.append(", ");
                    print(c.args().get(i), sb);
                }
                sb.append(')');
            }
            case TensorRead r -> {
                sb.append(r.tensor().name()).append('[');
                for (int i = 0; i < r.indices().size(); i++) {
                    if (i > 0) sb.append(", ");
                    print(r.indices().get(i), sb);
                }
                sb.append(']');
            }
            case BufferLoad l -> {
                sb.append(l.buffer().name()).append('[');
                for (int i = 0; i < l.indices().size(); i++) {
                    if (i > 0) sb.append(", ");
                    print(l.indices().get(i), sb);
                }
                sb.append(']');
            }
            case Reduce r -> {
                sb.append(r.reducer().name()).append('(');
                if (r.sources().size() == 1) {
                    print(r.sources().get(0), sb);
                } else {
                    sb.append('(')
                            .append(r.sources().stream().map(ExprPrinter::print).collect(Collectors.joining(", ")))
                            .append(')');
                }
                sb.append(", axis=[")
                        .append(r.axes().stream().map(Var::name).collect(Collectors.joining(", ")))
                        .append(']');
                if (!(r.condition() instanceof IntImm c && c.value() == 1)) {
                    sb.append(", where=");
                    print(r.condition(), sb);
                }
                if (r.reducer().arity() > 1) sb.append(", value=").append(r.valueIndex());
                sb.append(')');
            }
        }
    }

    private static void infix(StringBuilder sb, Expr a, String op, Expr b) {
        sb.append('(');
        print(a, sb);
        sb.append(' ').append(op).append(' ');
        print(b, sb);
        sb.append(')');
    }
}
