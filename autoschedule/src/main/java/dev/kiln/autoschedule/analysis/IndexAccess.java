package dev.kiln.autoschedule.analysis;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Var;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import java.util.ArrayList;
import java.util.List;

/**
 * How one read's indices relate to the reading operation's own output axes (Ansor's
 * IsSimpleAccess): the read is <em>simple</em> when every index is a constant or
 * {@code axis ± constant} for an output axis of the reader; then it also says whether some
 * output axis is missing, used twice, or used out of order (constants are ignored for all three,
 * except that index 0 in the position of an axis of extent 1 stands for that axis: not missing).
 */
public record IndexAccess(boolean simple, boolean axisMissing, boolean axisDuplicated, boolean sameOrder) {

    /** The read is simple, uses every axis once and in order: an element-wise (possibly shifted) read. */
    public boolean isElementwise() {
        return simple && !axisMissing && !axisDuplicated && sameOrder;
    }

    /** Classifies the read {@code indices} made by {@code reader}; a placeholder reader is never simple. */
    public static IndexAccess of(Operation reader, List<Expr> indices) {
        if (!(reader instanceof ComputeOp op)) return new IndexAccess(false, false, false, false);
        List<IterVar> axes = op.axes();
        int[] count = new int[axes.size()];
        boolean[] unit = new boolean[axes.size()];
        List<Integer> positions = new ArrayList<>();
        for (int d = 0; d < indices.size(); d++) {
            Expr index = indices.get(d);
            if (index instanceof IntImm) {
                // index 0 at the position of an axis of extent 1 reads that axis's one element: a broadcasting
                // op's index of a unit dimension (the batch of 1 in a residual add), not a missing axis
                if (op.readsUnitAxisAt(index, d)) unit[d] = true;
                continue;
            }
            Var v = shiftedVar(index);
            int pos = v == null ? -1 : indexOf(axes, v);
            if (pos < 0) return new IndexAccess(false, false, false, false);
            positions.add(pos);
            count[pos]++;
        }
        boolean missing = false, duplicated = false, ordered = true;
        for (int i = 0; i < count.length; i++) {
            missing |= count[i] == 0 && !unit[i];
            duplicated |= count[i] > 1;
        }
        for (int k = 1; k < positions.size(); k++) ordered &= positions.get(k) >= positions.get(k - 1);
        return new IndexAccess(true, missing, duplicated, ordered);
    }

    /** {@code v}, {@code v + c}, {@code c + v} or {@code v - c} with c an integer constant: v; else null. */
    public static Var shiftedVar(Expr e) {
        if (e instanceof Var v) return v;
        if (e instanceof Binary(BinaryOp op, Expr a, Expr b)) {
            if (op == BinaryOp.ADD && a instanceof Var v && b instanceof IntImm) return v;
            if (op == BinaryOp.ADD && b instanceof Var v && a instanceof IntImm) return v;
            if (op == BinaryOp.SUB && a instanceof Var v && b instanceof IntImm) return v;
        }
        return null;
    }

    private static int indexOf(List<IterVar> axes, Var v) {
        for (int i = 0; i < axes.size(); i++) if (axes.get(i) == v) return i;
        return -1;
    }
}
