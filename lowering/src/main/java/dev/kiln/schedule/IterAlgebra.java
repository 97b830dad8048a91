package dev.kiln.schedule;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The arithmetic of split and fuse: every loop of a stage as an expression of its leaf loops,
 * and the guards that keep the points of splits that do not divide their extent inside the
 * original domain.
 */
public final class IterAlgebra {
    private IterAlgebra() {}

    /**
     * The value of every loop of the stage (by uid) given the values of its leaves. The values of
     * the original axes (uids below {@code numRoots}) are offsets from the axes' minimum.
     */
    public static Map<Integer, Expr> values(Stage st, Map<Integer, Expr> leafValues) {
        Map<Integer, Expr> v = new HashMap<>(leafValues);
        List<IterRelation> rel = st.relations();
        for (int r = rel.size() - 1; r >= 0; r--) {
            switch (rel.get(r)) {
                case IterRelation.Split sp -> {
                    if (sp.factor() == null) {
                        throw new ScheduleException("stage '" + st.name() + "': loop '" + st.all().get(sp.parent()).name()
                                + "' has an undecided tile size");
                    }
                    Expr outer = require(st, v, sp.outer());
                    Expr inner = require(st, v, sp.inner());
                    v.put(sp.parent(), outer.mul(sp.factor()).add(inner));
                }
                case IterRelation.Fuse fu -> {
                    Expr fused = require(st, v, fu.fused());
                    long stride = 1;
                    for (int k = fu.parents().size() - 1; k >= 0; k--) {
                        Iter p = st.all().get(fu.parents().get(k));
                        if (p.extent() == null) {
                            throw new ScheduleException("stage '" + st.name() + "': fused loop '" + p.name()
                                    + "' has an undecided extent");
                        }
                        Expr q = stride == 1 ? fused : fused.floordiv(stride);
                        v.put(p.uid(), k == 0 ? q : q.floormod(p.extent()));
                        stride *= p.extent();
                    }
                }
            }
        }
        return v;
    }

    private static Expr require(Stage st, Map<Integer, Expr> v, int uid) {
        Expr e = v.get(uid);
        if (e == null) {
            throw new ScheduleException("stage '" + st.name() + "': loop '" + st.all().get(uid).name() + "' has no value");
        }
        return e;
    }

    /**
     * Conditions true exactly on the points of the original domain, for splits whose parts cover
     * more than their parent (a tile size that does not divide the extent).
     */
    public static List<Expr> guards(Stage st, Map<Integer, Expr> values) {
        List<Expr> out = new ArrayList<>();
        for (IterRelation r : st.relations()) {
            if (r instanceof IterRelation.Split sp) {
                Long pe = st.all().get(sp.parent()).extent();
                Long oe = st.all().get(sp.outer()).extent();
                if (pe != null && oe != null && sp.factor() != null && oe * sp.factor() > pe) {
                    Expr p = values.get(sp.parent());
                    out.add(p.lt(IntImm.i32(pe)));
                }
            }
        }
        return out;
    }
}
