package dev.kiln.cuda.codegen;

import dev.kiln.arith.ConstIntBound;
import dev.kiln.arith.IntRange;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import dev.kiln.tir.For;
import dev.kiln.tir.Let;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.StmtVisitor;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The range of every loop and let variable of a program (a variable used in several places,
 * as unrolled copies do, gets the union), for {@link ConstIntBound}: code generation writes
 * integer arithmetic plainly where the bounds prove it cannot wrap.
 */
final class VarRanges {
    private final Map<Var, IntRange> ranges = new IdentityHashMap<>();
    private ConstIntBound bound;

    private VarRanges() {}

    static ConstIntBound of(Stmt body) {
        VarRanges r = new VarRanges();
        r.walk(body);
        return new ConstIntBound(r.ranges);
    }

    private IntRange bound(Expr e) {
        if (e instanceof IntImm c) return IntRange.single(c.value());
        if (bound == null) bound = new ConstIntBound(ranges);
        return bound.bound(e);
    }

    private void put(Var v, IntRange r) {
        ranges.merge(v, r, IntRange::union);
        bound = null;
    }

    private void walk(Stmt s) {
        new StmtVisitor() {
            @Override
            public void visit(Stmt x) {
                switch (x) {
                    case For f -> {
                        IntRange min = bound(f.min()), ext = bound(f.extent());
                        IntRange full = IntRange.full(f.var().dtype());
                        IntRange r;
                        try {
                            r = ext.max() < 1
                                    ? IntRange.single(min.min())
                                    : IntRange.of(min.min(), Math.addExact(min.max(), ext.max() - 1));
                        } catch (ArithmeticException overflow) {
                            r = full;
                        }
                        put(f.var(), r.within(full) ? r : full);
                    }
                    case Let l -> {
                        if (!l.var().dtype().isFloat()) put(l.var(), bound(l.value()));
                    }
                    default -> {}
                }
                visitChildren(x);
            }
        }.visit(s);
    }
}
