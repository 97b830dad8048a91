package dev.kiln.schedule;

import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprRewriter;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The inline pass of schedule lowering: the bodies of every stage with each read of an inlined
 * stage replaced by that stage's body at the read's indices (recursively), so inlined stages
 * need no loops or buffers.
 */
final class InlineStages {
    private InlineStages() {}

    /** The bodies of stage i (null for placeholders), with inlined stages substituted. */
    static List<List<Expr>> apply(LoopState s) {
        Map<Tensor, ComputeOp> inlined = new IdentityHashMap<>();
        Map<Tensor, Expr> inlinedBody = new IdentityHashMap<>();
        List<List<Expr>> out = new ArrayList<>();
        for (Stage st : s.stages()) {
            if (!(st.op() instanceof ComputeOp c)) {
                out.add(null);
                continue;
            }
            List<Expr> bodies = new ArrayList<>();
            for (Expr b : c.bodies()) bodies.add(substitute(b, inlined, inlinedBody));
            out.add(bodies);
            if (st.computeAt() == ComputeAtKind.INLINED) {
                inlined.put(c.output(0), c);
                inlinedBody.put(c.output(0), bodies.get(0));
            }
        }
        return out;
    }

    private static Expr substitute(Expr e, Map<Tensor, ComputeOp> inlined, Map<Tensor, Expr> bodies) {
        if (inlined.isEmpty()) return e;
        return new ExprRewriter() {
            @Override
            public Expr visit(Expr x) {
                Expr y = rewriteChildren(x);
                if (y instanceof TensorRead r && inlined.containsKey(r.tensor())) {
                    ComputeOp op = inlined.get(r.tensor());
                    Map<Var, Expr> m = new IdentityHashMap<>();
                    List<IterVar> axes = op.axes();
                    for (int d = 0; d < axes.size(); d++)
                        m.put(axes.get(d), r.indices().get(d));
                    try {
                        return Exprs.substitute(bodies.get(r.tensor()), m);
                    } catch (KilnException ex) {
                        throw new ScheduleException("inlining '" + op.name() + "': " + ex.getMessage());
                    }
                }
                return y;
            }
        }.visit(e);
    }
}
