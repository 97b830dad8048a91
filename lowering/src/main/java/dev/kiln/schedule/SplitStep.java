package dev.kiln.schedule;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * {@code SP}: splits loop {@code iterId} into {@code lengths.size() + 1} loops named
 * {@code x.0 .. x.n}. With {@code innerToOuter} the lengths are the extents of the inner loops
 * {@code x.1 .. x.n} (tile sizes, outer to inner) and {@code x.0} takes what is left; otherwise
 * they are the extents of the outer loops {@code x.0 .. x.n-1} (numbers of parts). A length is
 * null while undecided (a sketch). A split that does not divide the extent leaves a guard.
 *
 * @param extent the loop's extent when the step was made (informational; null if unknown)
 */
public record SplitStep(int stageId, int iterId, Long extent, List<Integer> lengths, boolean innerToOuter)
        implements Step {
    public SplitStep {
        lengths = Collections.unmodifiableList(new ArrayList<>(lengths));
    }

    public boolean isConcrete() {
        return !lengths.contains(null);
    }

    /** The same split with decided lengths (what the search fills in). */
    public SplitStep withLengths(List<Integer> newLengths) {
        return new SplitStep(stageId, iterId, extent, newLengths, innerToOuter);
    }

    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        Iter it = StepChecks.loop(st, iterId);
        if (lengths.isEmpty()) throw new ScheduleException("a split needs at least one length");
        for (Integer l : lengths) {
            if (l != null && l <= 0) throw new ScheduleException("split by " + l + ": lengths must be positive");
        }
        if (it.annotation() != IterAnnotation.NONE) {
            throw new ScheduleException("loop '" + it.name() + "' is already annotated "
                    + it.annotation().displayName() + "; split before annotating");
        }
        int n = lengths.size();
        List<Iter> all = new ArrayList<>(st.all());
        List<IterRelation> rel = new ArrayList<>(st.relations());
        Long[] ext = new Long[n + 1];
        Long known = it.extent();
        long prod = 1;
        boolean defined = true;
        for (Integer l : lengths) {
            if (l == null) defined = false;
            else prod = Math.multiplyExact(prod, (long) l);
        }
        int[] child = new int[n + 1];
        for (int k = 0; k <= n; k++) child[k] = all.size() + k;
        int firstTmp = all.size() + n + 1;
        List<Iter> tmps = new ArrayList<>();
        if (innerToOuter) {
            for (int k = 1; k <= n; k++) ext[k] = lengths.get(k - 1) == null ? null : (long) lengths.get(k - 1);
            ext[0] = known != null && defined ? StepChecks.ceilDiv(known, prod) : null;
            // parent = (((c0 * l1 + c1) * l2 + c2) ...): a chain of factor splits from the inside out.
            int cur = it.uid();
            Long curExt = known;
            for (int k = n; k >= 1; k--) {
                Long f = ext[k];
                int outer;
                Long outerExt = curExt != null && f != null ? StepChecks.ceilDiv(curExt, f) : null;
                if (k == 1) {
                    outer = child[0];
                } else {
                    outer = firstTmp + tmps.size();
                    tmps.add(new Iter(outer, it.name() + ".split" + k, outerExt, it.kind(), IterAnnotation.NONE));
                }
                rel.add(new IterRelation.Split(cur, outer, child[k], f));
                cur = outer;
                curExt = outerExt;
            }
        } else {
            // a chain of nparts splits from the outside in: c0 has l1 parts, c1 has l2 parts, ...
            int cur = it.uid();
            Long curExt = known;
            for (int k = 0; k < n; k++) {
                Integer parts = lengths.get(k);
                Long factor = curExt != null && parts != null ? StepChecks.ceilDiv(curExt, parts) : null;
                ext[k] = curExt != null && factor != null
                        ? StepChecks.ceilDiv(curExt, factor)
                        : parts == null ? null : (long) parts;
                int inner;
                if (k == n - 1) {
                    inner = child[n];
                } else {
                    inner = firstTmp + tmps.size();
                    tmps.add(new Iter(inner, it.name() + ".split" + (k + 1), factor, it.kind(), IterAnnotation.NONE));
                }
                rel.add(new IterRelation.Split(cur, child[k], inner, factor));
                cur = inner;
                curExt = factor;
            }
            ext[n] = curExt;
        }
        for (int k = 0; k <= n; k++)
            all.add(new Iter(child[k], it.name() + "." + k, ext[k], it.kind(), IterAnnotation.NONE));
        all.addAll(tmps);
        List<Integer> leaves = new ArrayList<>(st.leaves());
        leaves.remove(iterId);
        for (int k = n; k >= 0; k--) leaves.add(iterId, child[k]);
        LoopState out = s.withStage(stageId, st.with(all, leaves, rel));
        // Stages computed at the split loop move to its innermost part.
        return StepChecks.moveAttachments(out, stageId, it.uid(), child[n]);
    }

    @Override
    public String describe(LoopState s) {
        return "split(" + StepChecks.loopName(s, stageId, iterId) + ", " + lengths + (innerToOuter ? "" : " parts")
                + ")";
    }
}
