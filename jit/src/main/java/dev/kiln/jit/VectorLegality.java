package dev.kiln.jit;

import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Optional;
import java.util.Set;

/**
 * Decides whether a vectorized loop's body can run on all lanes at once. As in TVM, the lanes of
 * a vectorized loop are assumed independent (the schedule's promise); what cannot be expressed
 * with vectors is a store whose address is the same in every lane but whose value (or guarding
 * condition) is not, since the serial semantics is then "the last lane wins" or, in a reduction
 * over the vectorized axis, a sum over lanes; and a loop whose bounds differ between lanes, or a
 * buffer allocated per iteration. Such loops are generated as serial loops, with a note in the
 * kernel's source and a log line: never silently.
 */
final class VectorLegality {
    private VectorLegality() {}

    /** Empty when the loop can be vectorized; otherwise why not. */
    static Optional<String> check(For loop) {
        Set<Var> varying = Collections.newSetFromMap(new IdentityHashMap<>());
        varying.add(loop.var());
        return walk(loop.body(), varying, false);
    }

    private static boolean varies(Expr e, Set<Var> varying) {
        boolean[] hit = {false};
        Exprs.forEach(e, x -> {
            if (x instanceof Var v && varying.contains(v)) hit[0] = true;
        });
        return hit[0];
    }

    private static Optional<String> walk(Stmt s, Set<Var> varying, boolean maskVaries) {
        return switch (s) {
            case For f -> {
                if (f.kind() == ForKind.PARALLEL || f.kind() == ForKind.THREAD_BOUND) {
                    throw new KilnException("loop '" + f.var().name() + "' ("
                            + f.kind().displayName() + ") is inside a vectorized loop; only "
                            + "serial, unrolled and vectorized loops may be");
                }
                if (varies(f.min(), varying) || varies(f.extent(), varying)) {
                    yield Optional.of("the bounds of inner loop '" + f.var().name() + "' differ between lanes");
                }
                yield walk(f.body(), varying, maskVaries);
            }
            case Store st -> {
                boolean idx = st.indices().stream().anyMatch(e -> varies(e, varying));
                if (!idx && (maskVaries || varies(st.value(), varying))) {
                    yield Optional.of("the store to '" + st.buffer().name() + "' has the same address in every lane "
                            + "but a value or condition that differs between lanes (a reduction over the "
                            + "vectorized loop?)");
                }
                yield Optional.empty();
            }
            case Allocate a -> Optional.of("it allocates buffer '" + a.buffer().name() + "' in every iteration");
            case Seq q -> {
                for (Stmt c : q.stmts()) {
                    Optional<String> r = walk(c, varying, maskVaries);
                    if (r.isPresent()) yield r;
                }
                yield Optional.empty();
            }
            case IfThenElse i -> {
                boolean m = maskVaries || varies(i.cond(), varying);
                Optional<String> r = walk(i.then(), varying, m);
                if (r.isPresent() || i.otherwise() == null) yield r;
                yield walk(i.otherwise(), varying, m);
            }
            case Let l -> {
                if (varies(l.value(), varying)) varying.add(l.var());
                yield walk(l.body(), varying, maskVaries);
            }
            case Evaluate e -> Optional.empty();
            case Pragma p -> walk(p.body(), varying, maskVaries);
            case Barrier b -> Optional.empty();
        };
    }
}
