package dev.kiln.schedule;

import dev.kiln.ir.Expr;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The arithmetic of split and fuse: every loop of a stage as an expression of its leaf loops,
 * and the guards that keep the points of splits that do not divide their extent inside the
 * original domain.
 */
final class IterAlgebra {
    private IterAlgebra() {}

    /**
     * The value of every loop of the stage (by uid) given the values of its leaves. The values of
     * the original axes (uids below {@code numRoots}) are offsets from the axes' minimum.
     */
    public static Map<Integer, Expr> values(Stage st, Map<Integer, Expr> leafValues, Map<Integer, Long> extents) {
        Map<Integer, Expr> v = new HashMap<>(leafValues);
        List<IterRelation> rel = st.relations();
        for (int r = rel.size() - 1; r >= 0; r--) {
            switch (rel.get(r)) {
                case IterRelation.Split sp -> {
                    if (sp.factor() == null) {
                        throw new ScheduleException("stage '" + st.name() + "': loop '"
                                + st.all().get(sp.parent()).name() + "' has an undecided tile size");
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
                        Long ext = extents.get(p.uid());
                        if (ext == null) {
                            throw new ScheduleException(
                                    "stage '" + st.name() + "': fused loop '" + p.name() + "' has an undecided extent");
                        }
                        Expr q = stride == 1 ? fused : fused.floordiv(stride);
                        v.put(p.uid(), k == 0 ? q : q.floormod(ext));
                        stride *= ext;
                    }
                }
            }
        }
        return v;
    }

    /** The extents the steps recorded on the stage's loops (null entries left out). */
    public static Map<Integer, Long> recordedExtents(Stage st) {
        Map<Integer, Long> m = new HashMap<>();
        for (Iter it : st.all()) if (it.extent() != null) m.put(it.uid(), it.extent());
        return m;
    }

    /**
     * The extent of every loop given new extents of the original axes (after bound inference a
     * stage computed inside another loop covers only the region needed there): a split gives its
     * inner loop the factor and its outer loop the rest, rounded up; a fuse multiplies. As in
     * TVM, an inner loop whose parent became shorter than the factor is shortened to the parent,
     * unless a loop derived from it is bound to a GPU thread axis (the thread count must stay as
     * the schedule says; a guard keeps the extra threads idle).
     */
    public static Map<Integer, Long> extents(Stage st, Map<Integer, Long> rootExtents) {
        Map<Integer, Long> m = new HashMap<>(rootExtents);
        Set<Integer> threadDerived = null;
        for (IterRelation r : st.relations()) {
            switch (r) {
                case IterRelation.Split sp -> {
                    Long pe = m.get(sp.parent());
                    if (sp.factor() == null || pe == null) {
                        throw new ScheduleException("stage '" + st.name() + "': loop '"
                                + st.all().get(sp.parent()).name() + "' has an undecided tile size");
                    }
                    long inner = sp.factor();
                    if (pe < inner) {
                        if (threadDerived == null) threadDerived = threadDerived(st);
                        if (!threadDerived.contains(sp.inner())) inner = pe;
                    }
                    m.put(sp.inner(), inner);
                    m.put(sp.outer(), (pe + sp.factor() - 1) / sp.factor());
                }
                case IterRelation.Fuse fu -> {
                    long e = 1;
                    for (int p : fu.parents()) e *= m.get(p);
                    m.put(fu.fused(), e);
                }
            }
        }
        return m;
    }

    /** The loops from which a thread-bound leaf derives (the leaf included). */
    private static Set<Integer> threadDerived(Stage st) {
        Set<Integer> out = new HashSet<>();
        for (int leaf : st.leaves()) if (st.all().get(leaf).annotation().isThreadBinding()) out.add(leaf);
        List<IterRelation> rel = st.relations();
        for (int k = rel.size() - 1; k >= 0; k--) {
            switch (rel.get(k)) {
                case IterRelation.Split sp -> {
                    if (out.contains(sp.outer()) || out.contains(sp.inner())) out.add(sp.parent());
                }
                case IterRelation.Fuse fu -> {
                    if (out.contains(fu.fused())) out.addAll(fu.parents());
                }
            }
        }
        return out;
    }

    private static Expr require(Stage st, Map<Integer, Expr> v, int uid) {
        Expr e = v.get(uid);
        if (e == null) {
            throw new ScheduleException(
                    "stage '" + st.name() + "': loop '" + st.all().get(uid).name() + "' has no value");
        }
        return e;
    }

    /**
     * Conditions true exactly on the points of the original domain, for splits whose parts cover
     * more than their parent (a tile size that does not divide the extent).
     */
    public static List<Expr> guards(Stage st, Map<Integer, Expr> values, Map<Integer, Long> extents) {
        return new ArrayList<>(guardsByLoop(st, values, extents).values());
    }

    /** The guards of {@link #guards}, keyed by the uid of the loop whose split overshoots. */
    public static Map<Integer, Expr> guardsByLoop(Stage st, Map<Integer, Expr> values, Map<Integer, Long> extents) {
        Map<Integer, Expr> out = new java.util.LinkedHashMap<>();
        for (IterRelation r : st.relations()) {
            if (r instanceof IterRelation.Split sp) {
                Long pe = extents.get(sp.parent());
                Long oe = extents.get(sp.outer());
                Long ie = extents.get(sp.inner());
                if (pe != null
                        && oe != null
                        && sp.factor() != null
                        && (oe - 1) * sp.factor() + (ie == null ? sp.factor() : ie) > pe) {
                    Expr p = values.get(sp.parent());
                    out.put(sp.parent(), p.lt(dev.kiln.ir.Literals.of(p.dtype(), pe)));
                }
            }
        }
        return out;
    }
}
