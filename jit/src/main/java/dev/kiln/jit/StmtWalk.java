package dev.kiln.jit;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Var;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Stmts;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.Set;

/** What the code generator asks of a statement, on the traversal library ({@link Stmts}): its variables and buffers. */
final class StmtWalk {
    private StmtWalk() {}

    /** Every variable mentioned in {@code s}, in first-use order (identity). */
    static Set<Var> vars(Stmt s) {
        Set<Var> out = Collections.newSetFromMap(new IdentityHashMap<>());
        Set<Var> ordered = new LinkedHashSet<>();
        Stmts.forEachExprNode(s, x -> {
            if (x instanceof Var v && out.add(v)) ordered.add(v);
        });
        return ordered;
    }

    /** Every buffer (the base of a view) loaded from or stored to in {@code s}: loads first, in first-use order. */
    static Set<Buffer> buffers(Stmt s) {
        Set<Buffer> ordered = new LinkedHashSet<>(); // Buffer compares by identity
        Stmts.forEachExprNode(s, x -> {
            if (x instanceof BufferLoad l) ordered.add(l.buffer().base());
        });
        ordered.addAll(Stmts.stored(s));
        return ordered;
    }
}
