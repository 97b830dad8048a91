package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.sketch.AddCacheReadPack;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ReorderStep;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeOp;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * K-blocking of a multi-level-tiled stage (the GotoBLAS/BLIS loop order; issue 13). Tiled "SSRSRS", a
 * matmul runs {@code i.0 j.0 i.1 j.1 k.0 i.2 j.2 k.1 i.3 j.3}: every {@code i.1 x j.1} tile sweeps the
 * whole reduction, so a {@code k.1 x j} block of B (packed at {@code k.0} by {@code AddCacheReadPack})
 * is reused only across the {@code i.2} rows of one tile, and is read (and packed) again for the next
 * {@code i.1}. K-blocked, the outer reduction level moves in front of the level-1 spatial loops,
 * {@code i.0 j.0 k.0 i.1 j.1 i.2 j.2 k.1 i.3 j.3}: for one {@code k.0} block the whole level-0 tile is
 * computed, so the packed KC x NC block of B stays in L2/L1 across every row block of A (GotoBLAS's
 * {@code jc, pc, [pack B], ic, jr, ir}), the MC x KC block of A across the column blocks, and the
 * output tile is read and written once per {@code k.0} step. It matters only where the level-1 loops
 * run more than once: for a stage computed at its consumer's level-0 tile or at root (at level 2 the
 * level-1 loops have extent 1 and the orders are the same program).
 *
 * <p>The packed copy of the operand read along the reduction (A's, {@code AddCacheReadPack}) follows the
 * order ({@link #placeRowCopies}): blocked, it is computed at the innermost level-1 loop over an axis
 * its block depends on ({@code i.1}: GotoBLAS packs the MC x KC block of A per row block inside the K
 * block, reused by every column block), not for the whole level-0 tile at {@code k.0}; unblocked, at
 * the first reduction loop, where its sketch put it.
 *
 * <p>The choice is one {@link ReorderStep} of the stage (and those compute_at steps), so it is
 * serialised, replayed and printed like any step. Loops are recognised by their split levels (the
 * suffix of {@code i.1}), the reduction group by being the level-0 part of every reduction axis, and
 * neither group may be annotated.
 */
public final class KBlocking {
    private KBlocking() {}

    /**
     * The loop positions of a stage that can be K-blocked or already is: {@code r} is the first loop
     * of the level-0 reduction group ({@code nR} loops), {@code nS} the number of spatial axes.
     */
    public record Shape(int stageId, int r, int nS, int nR, boolean blocked) {
        /** The positions of the level-1 spatial loops (before the reduction group, or after it when blocked). */
        public int windowStart() {
            return blocked ? r + nR : r - nS;
        }

        /** The loop order that moves the reduction group in front of the level-1 loops (or back). */
        public List<Integer> toggledOrder(int loops) {
            List<Integer> order = new ArrayList<>();
            if (!blocked) {
                range(order, 0, r - nS);
                range(order, r, r + nR);
                range(order, r - nS, r);
                range(order, r + nR, loops);
            } else {
                range(order, 0, r);
                range(order, r + nR, r + nR + nS);
                range(order, r, r + nR);
                range(order, r + nR + nS, loops);
            }
            return order;
        }

        /** The step that toggles the blocking of the stage in the state this shape was read from. */
        public ReorderStep toggle(LoopState s) {
            return new ReorderStep(
                    stageId, toggledOrder(s.stage(stageId).iters().size()));
        }

        private static void range(List<Integer> out, int from, int to) {
            for (int i = from; i < to; i++) out.add(i);
        }
    }

    /**
     * The stage's K-blocking shape: unblocked (level-1 spatial loops right before the level-0
     * reduction loops) or blocked (right after them); null if its loops have neither form.
     */
    public static Shape shape(LoopState s, int id) {
        Stage st = s.stage(id);
        if (st.isPlaceholder() || !st.isTiled()) return null;
        ComputeOp op = st.computeOp();
        int nS = op.axes().size(), nR = op.reduceAxes().size();
        if (nS == 0 || nR == 0) return null;
        List<Iter> iters = st.iters();
        int r = -1;
        for (int i = 0; i < iters.size(); i++) {
            if (iters.get(i).kind() == IterKind.REDUCE) {
                r = i;
                break;
            }
        }
        if (r < 0 || !group(iters, r, nR, IterKind.REDUCE, 0)) return null;
        if (r - nS >= 1 && group(iters, r - nS, nS, IterKind.SPATIAL, 1)) return new Shape(id, r, nS, nR, false);
        if (r >= 1 && group(iters, r + nR, nS, IterKind.SPATIAL, 1)) return new Shape(id, r, nS, nR, true);
        return null;
    }

    /**
     * Whether blocking the stage changes the program: the level-1 loops and the reduction group each
     * run more than once (the state must have inferred bounds, so a stage computed at a consumer's
     * tile has its outer loops shrunk to that tile).
     */
    public static boolean changesProgram(LoopState inferred, Shape sh) {
        List<Iter> iters = inferred.stage(sh.stageId()).iters();
        return product(iters, sh.windowStart(), sh.nS()) > 1 && product(iters, sh.r(), sh.nR()) > 1;
    }

    /** The shapes of every stage whose blocking can be toggled and changes the program, in stage order. */
    public static List<Shape> toggleable(LoopState inferred) {
        List<Shape> out = new ArrayList<>();
        for (int id = 0; id < inferred.stages().size(); id++) {
            Shape sh;
            try {
                sh = shape(inferred, id);
            } catch (KilnException e) {
                continue;
            }
            if (sh != null && changesProgram(inferred, sh)) out.add(sh);
        }
        return List.copyOf(out);
    }

    /** Whether the stage is K-blocked. */
    public static boolean isBlocked(LoopState s, int id) {
        Shape sh = shape(s, id);
        return sh != null && sh.blocked();
    }

    /**
     * The compute_at steps that put the stage's packed copies of operands read along the reduction
     * where its order wants them (see the class comment); empty when they are there already.
     */
    public static List<ComputeAtStep> placeRowCopies(LoopState s, int stageId) {
        Shape sh = shape(s, stageId);
        if (sh == null) return List.of();
        Stage reader = s.stage(stageId);
        AccessAnalyzer access = AccessAnalyzer.of(s);
        List<ComputeAtStep> out = new ArrayList<>();
        for (int copy : s.attachedTo(stageId)) {
            if (!AddCacheReadPack.isPackingCopy(s, copy)
                    || !AddCacheReadPack.packableRows(access, s.stage(copy), reader)) continue;
            int want = sh.blocked() ? innermostWindowLoopOf(access, s, sh, copy) : sh.r();
            if (want < 0 || reader.indexOfUid(s.stage(copy).attachIter()) == want) continue;
            out.add(new ComputeAtStep(copy, stageId, want));
        }
        return List.copyOf(out);
    }

    /** The position of the innermost level-1 loop over an axis the copy's block depends on, or -1. */
    private static int innermostWindowLoopOf(AccessAnalyzer access, LoopState s, Shape sh, int copy) {
        Stage reader = s.stage(sh.stageId());
        List<List<Expr>> reads =
                access.readFrom(reader.computeOp()).get(s.stage(copy).op());
        if (reads == null) return -1;
        Set<String> used = new HashSet<>();
        for (List<Expr> idx : reads) {
            for (Expr e : idx) {
                for (IterVar a : reader.computeOp().axes()) if (Exprs.uses(e, (Var) a)) used.add(a.name());
            }
        }
        for (int k = sh.windowStart() + sh.nS() - 1; k >= sh.windowStart(); k--) {
            String name = reader.iter(k).name();
            if (used.contains(name.substring(0, name.lastIndexOf('.')))) return k;
        }
        return -1;
    }

    private static boolean group(List<Iter> iters, int from, int n, IterKind kind, int level) {
        if (from < 0 || from + n > iters.size()) return false;
        for (int i = from; i < from + n; i++) {
            Iter it = iters.get(i);
            if (it.kind() != kind || it.annotation() != IterAnnotation.NONE || level(it) != level) return false;
        }
        return true;
    }

    private static long product(List<Iter> iters, int from, int n) {
        long p = 1;
        for (int i = from; i < from + n; i++) {
            Long e = iters.get(i).extent();
            if (e == null) return 0;
            p *= e;
        }
        return p;
    }

    /** The split level of a loop named {@code x.<level>}, or -1. */
    static int level(Iter it) {
        String name = it.name();
        int dot = name.lastIndexOf('.');
        if (dot < 0 || dot == name.length() - 1) return -1;
        int v = 0;
        for (int i = dot + 1; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < '0' || c > '9' || v > 1000) return -1;
            v = v * 10 + (c - '0');
        }
        return v;
    }
}
