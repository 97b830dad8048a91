package dev.kiln.jit;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.For;
import dev.kiln.tir.Let;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.StmtPrinter;
import dev.kiln.tir.StmtVisitor;
import dev.kiln.tir.Store;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The compile cache's key for a program: its printout plus what the printout leaves out, namely
 * which occurrences are the same variable or buffer (they compare by identity and may share a
 * name) and every buffer's dtype, shape, strides and scope. Two programs with equal keys compile
 * to the same code.
 */
public final class ProgramKey {
    private ProgramKey() {}

    /** The key of {@code f}; shared by the LLVM and JVM backends' compile caches. */
    public static String of(PrimFunc f) {
        StringBuilder sb = new StringBuilder(StmtPrinter.print(f)).append("#ids");
        Map<Var, Integer> vars = new IdentityHashMap<>();
        Map<Buffer, Integer> bufs = new IdentityHashMap<>();
        for (Buffer b : f.params()) buffer(sb, bufs, b);
        new StmtVisitor() {
            @Override
            public void visit(Stmt s) {
                switch (s) {
                    case For l -> var(sb, vars, l.var());
                    case Let l -> var(sb, vars, l.var());
                    case Allocate a -> buffer(sb, bufs, a.buffer());
                    case Store st -> buffer(sb, bufs, st.buffer());
                    default -> {}
                }
                visitChildren(s);
            }

            @Override
            public void visitExpr(dev.kiln.ir.Expr e) {
                Exprs.forEach(e, x -> {
                    if (x instanceof Var v) var(sb, vars, v);
                    if (x instanceof BufferLoad l) buffer(sb, bufs, l.buffer());
                });
            }
        }.visit(f.body());
        return sb.toString();
    }

    private static void var(StringBuilder sb, Map<Var, Integer> ids, Var v) {
        Integer id = ids.get(v);
        if (id == null) {
            ids.put(v, id = ids.size());
            sb.append(" v").append(id).append(':').append(v.dtype());
        } else {
            sb.append(" v").append(id);
        }
    }

    private static void buffer(StringBuilder sb, Map<Buffer, Integer> ids, Buffer b) {
        Integer id = ids.get(b);
        if (id == null) {
            ids.put(b, id = ids.size());
            sb.append(" b")
                    .append(id)
                    .append(':')
                    .append(b.dtype())
                    .append(b.shape())
                    .append(b.strides())
                    .append(b.scope());
            if (b.isView()) {
                sb.append(" view of");
                buffer(sb, ids, b.base());
            }
        } else {
            sb.append(" b").append(id);
        }
    }
}
