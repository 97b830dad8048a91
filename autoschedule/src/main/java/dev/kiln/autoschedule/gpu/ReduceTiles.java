package dev.kiln.autoschedule.gpu;

import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.IterRelation;
import dev.kiln.schedule.Stage;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Which original axes a stage's loops come from, and where its outermost reduction tile ends. */
final class ReduceTiles {
    private ReduceTiles() {}

    /**
     * The index of the stage's first reduction loop, scanning its loops in order, by which the
     * loops seen cover every original reduction axis: the end of the outermost reduction tile
     * ({@code k.0} for a matmul tiled "SSSRRSRS", {@code rx.0} for a conv2d with rc, ry, rx).
     * -1 if the stage has no reduction axis.
     */
    static int outermostTileEnd(Stage st) {
        Set<Integer> reduceRoots = new HashSet<>();
        for (int uid = 0; uid < st.numRoots(); uid++)
            if (st.all().get(uid).kind() == IterKind.REDUCE) reduceRoots.add(uid);
        if (reduceRoots.isEmpty()) return -1;
        Set<Integer> seen = new HashSet<>();
        List<Integer> leaves = st.leaves();
        for (int i = 0; i < leaves.size(); i++) {
            Iter it = st.all().get(leaves.get(i));
            roots(st, it.uid(), seen);
            if (it.kind() != IterKind.SPATIAL && seen.containsAll(reduceRoots)) return i;
        }
        return -1;
    }

    /** Adds the original axes (root uids) loop {@code uid} derives from. */
    static void roots(Stage st, int uid, Set<Integer> out) {
        if (uid < st.numRoots()) {
            out.add(uid);
            return;
        }
        for (IterRelation r : st.relations()) {
            switch (r) {
                case IterRelation.Split sp -> {
                    if (sp.outer() == uid || sp.inner() == uid) roots(st, sp.parent(), out);
                }
                case IterRelation.Fuse f -> {
                    if (f.fused() == uid) for (int p : f.parents()) roots(st, p, out);
                }
            }
        }
    }
}
