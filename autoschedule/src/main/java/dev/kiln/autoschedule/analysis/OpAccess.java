package dev.kiln.autoschedule.analysis;

import dev.kiln.ir.Call;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.Intrinsic;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Select;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one operation's body says about its reads, computed once per operation (Ansor's
 * per-op access analysis, §3.2 of the notes).
 *
 * @param op            the operation
 * @param reads         for each producer operation read, the index lists of its reads, in order of first use
 * @param simpleAccess  every read is simple ({@link IndexAccess}); true for a placeholder
 * @param strictlyInlineable simple access with every axis in order and none twice (no transposes), no
 *                      {@code exp} and no branch; an operation that reads nothing is strictly inlineable, a
 *                      placeholder is not
 * @param needsMultiLevelTiling the operation has data reuse: at least two producers are read without some
 *                      output axis of extent above 1, or one is and the operation reduces
 * @param hasBranch     the body contains a select
 * @param hasExp        the body calls {@code exp}
 */
public record OpAccess(
        Operation op,
        Map<Operation, List<List<Expr>>> reads,
        boolean simpleAccess,
        boolean strictlyInlineable,
        boolean needsMultiLevelTiling,
        boolean hasBranch,
        boolean hasExp) {

    /** Analyses one operation. */
    public static OpAccess of(Operation op) {
        if (!(op instanceof ComputeOp c)) {
            return new OpAccess(op, Map.of(), true, false, false, false, false);
        }
        Map<Operation, List<List<Expr>>> reads = new LinkedHashMap<>();
        boolean[] branch = {false}, exp = {false};
        for (Expr body : c.bodies()) {
            Exprs.forEach(body, e -> {
                if (e instanceof TensorRead r)
                    reads.computeIfAbsent(Tensor.of(r).op(), k -> new ArrayList<>())
                            .add(r.indices());
                if (e instanceof Select) branch[0] = true;
                if (e instanceof Call call && call.fn() == Intrinsic.EXP) exp[0] = true;
            });
        }
        boolean simple = true, ordered = true;
        for (List<List<Expr>> list : reads.values()) {
            for (List<Expr> idx : list) {
                IndexAccess a = IndexAccess.of(c, idx);
                if (!a.simple()) simple = false;
                if (!a.sameOrder() || a.axisDuplicated()) ordered = false;
            }
        }
        boolean inlineable = reads.isEmpty() || (simple && ordered && !exp[0] && !branch[0]);
        return new OpAccess(
                op, readOnly(reads), simple, inlineable, needsMultiLevelTiling(c, reads), branch[0], exp[0]);
    }

    private static boolean needsMultiLevelTiling(ComputeOp c, Map<Operation, List<List<Expr>>> reads) {
        int missing = 0;
        for (List<List<Expr>> list : reads.values()) {
            if (missesAnAxis(c, list)) missing++;
            if (missing >= 2 || (missing >= 1 && !c.reduceAxes().isEmpty())) return true;
        }
        return false;
    }

    /**
     * Whether some spatial axis of {@code c} of extent above 1 appears in none of the index lists {@code reads}:
     * the values read are reused across that axis.
     */
    public static boolean missesAnAxis(ComputeOp c, List<List<Expr>> reads) {
        Set<Var> used = Collections.newSetFromMap(new IdentityHashMap<>());
        for (List<Expr> idx : reads) {
            for (Expr e : idx)
                Exprs.forEach(e, x -> {
                    if (x instanceof Var v) used.add(v);
                });
        }
        for (IterVar axis : c.axes()) if (axis.extent() > 1 && !used.contains(axis)) return true;
        return false;
    }

    private static Map<Operation, List<List<Expr>>> readOnly(Map<Operation, List<List<Expr>>> m) {
        Map<Operation, List<List<Expr>>> out = new LinkedHashMap<>();
        m.forEach((k, v) -> out.put(k, List.copyOf(v)));
        return Collections.unmodifiableMap(out);
    }
}
