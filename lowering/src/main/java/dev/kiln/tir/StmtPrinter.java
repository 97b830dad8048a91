package dev.kiln.tir;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import java.util.stream.Collectors;

/**
 * Prints the loop IR as indented pseudo-code a newcomer can read:
 *
 * <pre>
 * func matmul(A: float32[512, 512], B: float32[512, 512], C: float32[512, 512]) {
 *   for i in 0..512 {
 *     for j in 0..512 {
 *       C[i, j] = 0f
 *       for k in 0..512 {
 *         C[i, j] = (C[i, j] + (A[i, k] * B[k, j]))
 * </pre>
 */
public final class StmtPrinter {
    private final StringBuilder sb = new StringBuilder();

    private StmtPrinter() {}

    public static String print(PrimFunc f) {
        StmtPrinter p = new StmtPrinter();
        p.sb.append("func ")
                .append(f.name())
                .append('(')
                .append(f.params().stream().map(StmtPrinter::describe).collect(Collectors.joining(", ")))
                .append(") {\n");
        p.stmt(f.body(), 1);
        p.sb.append("}\n");
        return p.sb.toString();
    }

    public static String print(Stmt s) {
        StmtPrinter p = new StmtPrinter();
        p.stmt(s, 0);
        return p.sb.toString();
    }

    /** {@code name: dtype[shape]}, with scope and strides when they are not the defaults. */
    public static String describe(Buffer b) {
        String s = b.name() + ": " + b.dtype()
                + b.shape().stream().map(ExprPrinter::print).collect(Collectors.joining(", ", "[", "]"));
        if (b.scope() != dev.kiln.ir.MemoryScope.GLOBAL) s += " " + b.scope().displayName();
        return s;
    }

    private void indent(int depth) {
        sb.append("  ".repeat(depth));
    }

    private void stmt(Stmt s, int d) {
        switch (s) {
            case For f -> {
                indent(d);
                String kind =
                        switch (f.kind()) {
                            case SERIAL -> "for";
                            case PARALLEL -> "parallel for";
                            case VECTORIZED -> "vectorized for";
                            case UNROLLED -> "unrolled for";
                            case THREAD_BOUND -> "for[" + f.thread().tag() + "]";
                        };
                sb.append(kind).append(' ').append(f.var().name()).append(" in ");
                if (f.min() instanceof dev.kiln.ir.IntImm m && m.value() == 0) {
                    sb.append("0..").append(ExprPrinter.print(f.extent()));
                } else {
                    sb.append(ExprPrinter.print(f.min()))
                            .append("..")
                            .append(ExprPrinter.print(f.min()))
                            .append(" + ")
                            .append(ExprPrinter.print(f.extent()));
                }
                sb.append(" {\n");
                stmt(f.body(), d + 1);
                indent(d);
                sb.append("}\n");
            }
            case Store st -> {
                indent(d);
                sb.append(st.buffer().name())
                        .append(indices(st.indices()))
                        .append(" = ")
                        .append(ExprPrinter.print(st.value()))
                        .append('\n');
            }
            case Allocate a -> {
                indent(d);
                sb.append("allocate ").append(describe(a.buffer())).append('\n');
                stmt(a.body(), d);
            }
            case Seq q -> {
                for (Stmt c : q.stmts()) stmt(c, d);
            }
            case IfThenElse i -> {
                indent(d);
                sb.append("if ").append(ExprPrinter.print(i.cond())).append(" {\n");
                stmt(i.then(), d + 1);
                if (i.otherwise() != null) {
                    indent(d);
                    sb.append("} else {\n");
                    stmt(i.otherwise(), d + 1);
                }
                indent(d);
                sb.append("}\n");
            }
            case Let l -> {
                indent(d);
                sb.append("let ")
                        .append(l.var().name())
                        .append(": ")
                        .append(l.var().dtype())
                        .append(" = ")
                        .append(ExprPrinter.print(l.value()))
                        .append('\n');
                stmt(l.body(), d);
            }
            case Evaluate e -> {
                indent(d);
                sb.append(ExprPrinter.print(e.value())).append('\n');
            }
            case Pragma p -> {
                indent(d);
                sb.append("pragma ")
                        .append(p.key())
                        .append(" = ")
                        .append(p.value())
                        .append('\n');
                stmt(p.body(), d);
            }
            case Barrier b -> {
                indent(d);
                sb.append("barrier()\n");
            }
        }
    }

    private static String indices(java.util.List<Expr> idx) {
        return idx.stream().map(ExprPrinter::print).collect(Collectors.joining(", ", "[", "]"));
    }
}
