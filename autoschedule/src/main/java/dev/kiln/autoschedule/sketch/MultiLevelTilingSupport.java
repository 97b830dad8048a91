package dev.kiln.autoschedule.sketch;

import dev.kiln.ir.KilnException;
import dev.kiln.schedule.FollowSplitStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ReorderStep;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The two tiling procedures the rules share: multi-level tiling by a structure string such as
 * {@code "SSRSRS"} (Ansor's DoMultiLevelTiling) and tiling a fused consumer like its producer
 * (FollowTiling). Loops are tracked by uid, so the indices of the steps are those of the state
 * each step is applied to.
 */
final class MultiLevelTilingSupport {
    private MultiLevelTilingSupport() {}

    /** A tiled state and the ids of the split steps of its spatial loops, in loop order. */
    record Tiled(LoopState state, List<Integer> spatialSplitSteps) {}

    /**
     * Splits every spatial loop of the stage into as many levels as the structure has 'S', every
     * reduction loop into as many as it has 'R' (lengths undecided), then orders the levels as
     * the structure says: for "SSRSRS" and a matmul, {@code i.0 j.0 i.1 j.1 k.0 i.2 j.2 k.1 i.3 j.3}.
     */
    static Tiled multiLevelTiling(LoopState s, int stageId, String structure) {
        int nS = 0, nR = 0;
        for (char c : structure.toCharArray()) {
            switch (Character.toLowerCase(c)) {
                case 's' -> nS++;
                case 'r' -> nR++;
                default -> throw new KilnException("invalid multi-level tiling structure '" + structure + "'");
            }
        }
        List<List<Integer>> space = levels(nS), reduce = levels(nR);
        List<Integer> splitSteps = new ArrayList<>();
        LoopState t = s;
        for (Iter it : s.stage(stageId).iters()) {
            int n;
            List<List<Integer>> target;
            if (it.kind() == IterKind.SPATIAL) {
                n = nS;
                target = space;
            } else if (it.kind() == IterKind.REDUCE) {
                n = nR;
                target = reduce;
            } else {
                throw new KilnException(
                        "multi-level tiling of '" + s.stage(stageId).name() + "': loop '" + it.name() + "' is "
                                + it.kind().name().toLowerCase() + ", neither spatial nor reduction");
            }
            if (n == 0) {
                throw new KilnException("multi-level tiling structure '" + structure + "' has no level for "
                        + it.kind().name().toLowerCase() + " loop '" + it.name() + "' of '"
                        + s.stage(stageId).name() + "'");
            }
            if (n == 1) {
                target.get(0).add(it.uid());
                continue;
            }
            int at = t.stage(stageId).indexOfUid(it.uid());
            t = t.apply(new SplitStep(stageId, at, it.extent(), Collections.nCopies(n - 1, null), true));
            Stage st = t.stage(stageId);
            for (int k = 0; k < n; k++) target.get(k).add(st.leaves().get(at + k));
            if (it.kind() == IterKind.SPATIAL) splitSteps.add(t.steps().size() - 1);
        }
        List<Integer> order = new ArrayList<>();
        int sc = 0, rc = 0;
        for (char c : structure.toCharArray()) {
            order.addAll(Character.toLowerCase(c) == 's' ? space.get(sc++) : reduce.get(rc++));
        }
        t = reorder(t, stageId, order);
        return new Tiled(t, List.copyOf(splitSteps));
    }

    /**
     * Tiles the consumer like its producer: every spatial loop follows the matching split step
     * in {@code nSplit + 1} parts (the first {@code nSplit - 1} tile sizes, then the product of
     * the rest), and the parts are ordered level by level. (Ansor also carries annotations of
     * the consumer's loops over to the parts; Kiln refuses to split an annotated loop, and no
     * rule annotates before tiling, so there are none to carry.)
     */
    static LoopState followTiling(LoopState s, int stageId, List<Integer> splitSteps, int nSplit) {
        if (nSplit < 1 || nSplit > 3) throw new KilnException("follow tiling supports 1 to 3 levels, not " + nSplit);
        List<Iter> iters = s.stage(stageId).iters();
        if (iters.size() != splitSteps.size()) {
            throw new KilnException("follow tiling of '" + s.stage(stageId).name() + "': " + iters.size()
                    + " loops but " + splitSteps.size() + " split steps to follow");
        }
        List<List<Integer>> levels = levels(nSplit + 1);
        LoopState t = s;
        for (int k = 0; k < iters.size(); k++) {
            Iter it = iters.get(k);
            if (it.kind() != IterKind.SPATIAL) {
                throw new KilnException(
                        "follow tiling of '" + s.stage(stageId).name() + "': loop '" + it.name() + "' is not spatial");
            }
            int at = t.stage(stageId).indexOfUid(it.uid());
            t = t.apply(new FollowSplitStep(stageId, at, splitSteps.get(k), nSplit));
            Stage st = t.stage(stageId);
            for (int l = 0; l <= nSplit; l++) levels.get(l).add(st.leaves().get(at + l));
        }
        List<Integer> order = new ArrayList<>();
        for (List<Integer> l : levels) order.addAll(l);
        return reorder(t, stageId, order);
    }

    /** Reorders the stage's loops into the given uid order. */
    private static LoopState reorder(LoopState s, int stageId, List<Integer> uidOrder) {
        Stage st = s.stage(stageId);
        List<Integer> perm = new ArrayList<>();
        for (int uid : uidOrder) perm.add(st.indexOfUid(uid));
        return s.apply(new ReorderStep(stageId, perm));
    }

    private static List<List<Integer>> levels(int n) {
        List<List<Integer>> l = new ArrayList<>();
        for (int i = 0; i < n; i++) l.add(new ArrayList<>());
        return l;
    }
}
