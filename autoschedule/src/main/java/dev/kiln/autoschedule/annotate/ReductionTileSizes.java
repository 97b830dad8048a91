package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeDAG;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.IntPredicate;

/**
 * Reduction blocks of a BLAS size (Kiln's addition to Ansor's tile-size sampling, issue 13). In a
 * multi-level-tiled reduction ("SSRSRS") the innermost reduction tiles multiply into the block of
 * the reduction one level-0 step covers ({@code k.1}, GotoBLAS's KC): the packed {@code KC x NC}
 * block of B and the {@code MC x KC} block of A that a K-blocked program ({@link KBlocking}) keeps in
 * cache. Ansor caps every innermost tile at {@code maxInnermostSplitFactor} (64), so KC is at most 64
 * and the output tile is read and written {@code K / KC} times when K-blocked. GotoBLAS and oneDNN
 * pick KC of 128-384 floats; GEMM 1024's fastest hand schedules (GemmStudy, quiet, 2026-12-02) use
 * KC = 128 and 256 with K-blocking. This class finds the reduction splits of a stage ({@link
 * #groups}) and the combinations of innermost reduction tiles whose product lies in {@code [KC_MIN,
 * KC_MAX]} ({@link #candidates}); a stage whose whole reduction is under {@link #LARGE_REDUCTION} has
 * none (it is left to Ansor's draw). Only exact divisors: a reduction tile has no tail.
 */
public final class ReductionTileSizes {
    private ReductionTileSizes() {}

    /** The smallest reduction block drawn (floats of one row of A, or of one column of B). */
    public static final int KC_MIN = 128;

    /** The largest reduction block drawn. */
    public static final int KC_MAX = 384;

    /** A stage whose reduction is shorter than this keeps Ansor's draw (KC_MIN would cover half of it). */
    public static final int LARGE_REDUCTION = 256;

    /**
     * The reduction splits of one multi-level-tiled stage (every split of a reduction loop with at least one tile
     * size, in loop order) and their extents.
     */
    public record Group(String stage, List<Integer> splitSteps, List<Long> extents) {
        public Group {
            splitSteps = List.copyOf(splitSteps);
            extents = List.copyOf(extents);
            if (splitSteps.isEmpty() || splitSteps.size() != extents.size())
                throw new KilnException("a reduction-block group of '" + stage + "' needs one extent per split");
        }

        /** The product of the split extents: the reduction the block divides. */
        public long reduction() {
            long p = 1;
            for (long e : extents) p *= e;
            return p;
        }
    }

    /** The reduction groups of a sketch's undecided splits. */
    public static List<Group> groups(ComputeDAG dag, Sketch sketch) {
        return groups(dag, sketch.state().steps(), InnermostTiles.undecided(sketch));
    }

    /** The reduction groups of a program's decided splits (the reduction-block mutation's). */
    public static List<Group> groups(ComputeDAG dag, List<Step> steps) {
        return groups(dag, steps, InnermostTiles.decided(steps));
    }

    /**
     * Per stage with a reduction loop and a multi-level split of a spatial loop (a tiled stage, not an rfactor's
     * split), its eligible splits of reduction loops. In a tensorized stage the intrinsic's own split (the one whose
     * innermost part lies in the tensorized nest: {@code k} by 4 for vpdpbusd) is left out; its tiling splits
     * ({@code k.0}, counted in the intrinsic's k steps, each 4 bytes of a row of A as a float is) are a group like
     * any other, so a tensorized GEMM draws K blocks of 128-384 steps (512-1536 bytes of a row, as float32's 128-384
     * floats) instead of Ansor's innermost tiles of at most 64 steps, whose accumulators round-trip through the
     * output at every K block.
     */
    private static List<Group> groups(ComputeDAG dag, List<Step> history, IntPredicate eligible) {
        Map<String, List<Integer>> splits = new LinkedHashMap<>();
        Map<String, List<Long>> extents = new LinkedHashMap<>();
        Map<String, List<Integer>> innerUids = new LinkedHashMap<>();
        Set<String> tiled = new LinkedHashSet<>();
        LoopState t = LoopState.initial(dag);
        for (int i = 0; i < history.size(); i++) {
            Step step = history.get(i);
            boolean reduce = false;
            if (step instanceof SplitStep sp && sp.extent() != null && eligible.test(i)) {
                Stage st = t.stage(sp.stageId());
                if (!st.isPlaceholder() && StagePredicates.hasReduceIter(st)) {
                    IterKind kind = st.iter(sp.iterId()).kind();
                    if (kind == IterKind.SPATIAL && sp.lengths().size() >= 2) tiled.add(st.name());
                    if (kind == IterKind.REDUCE && !sp.lengths().isEmpty()) {
                        splits.computeIfAbsent(st.name(), k -> new ArrayList<>())
                                .add(i);
                        extents.computeIfAbsent(st.name(), k -> new ArrayList<>())
                                .add(sp.extent());
                        reduce = true;
                    }
                }
            }
            t = t.apply(step);
            if (reduce) {
                SplitStep sp = (SplitStep) step;
                Stage after = t.stage(sp.stageId());
                innerUids
                        .computeIfAbsent(after.name(), k -> new ArrayList<>())
                        .add(after.iters()
                                .get(sp.iterId() + sp.lengths().size())
                                .uid());
            }
        }
        List<Group> out = new ArrayList<>();
        for (var e : splits.entrySet()) {
            if (!tiled.contains(e.getKey())) continue;
            Stage st = t.stage(t.stageIndex(e.getKey()));
            List<Integer> steps = new ArrayList<>(e.getValue());
            List<Long> ext = new ArrayList<>(extents.get(e.getKey()));
            if (st.tensorized() != null) {
                Set<Integer> nest = new java.util.HashSet<>();
                boolean in = false;
                for (Iter it : st.iters()) {
                    in |= it.uid() == st.tensorized().iterUid();
                    if (in) nest.add(it.uid());
                }
                List<Integer> uids = innerUids.get(e.getKey());
                for (int s = steps.size() - 1; s >= 0; s--) {
                    if (!nest.contains(uids.get(s))) continue;
                    steps.remove(s);
                    ext.remove(s);
                }
                if (steps.isEmpty()) continue;
            }
            out.add(new Group(e.getKey(), steps, ext));
        }
        return List.copyOf(out);
    }

    /**
     * Every combination of innermost reduction tiles (each dividing its loop) whose product is in
     * {@code [KC_MIN, KC_MAX]}, in a fixed order; empty when the reduction is under {@link #LARGE_REDUCTION}.
     */
    public static List<int[]> candidates(List<Long> extents, FactorizationMemo memo) {
        long total = 1;
        for (long e : extents) total *= e;
        List<int[]> out = new ArrayList<>();
        if (total < LARGE_REDUCTION) return out;
        combine(extents, memo, new int[extents.size()], 0, 1, out);
        return out;
    }

    private static void combine(
            List<Long> extents, FactorizationMemo memo, int[] tile, int axis, long product, List<int[]> out) {
        if (axis == tile.length) {
            if (product >= KC_MIN) out.add(tile.clone());
            return;
        }
        for (int d : memo.divisors(extents.get(axis))) {
            if (product * d > KC_MAX) break;
            tile[axis] = d;
            combine(extents, memo, tile, axis + 1, product * d, out);
        }
    }

    /** The block (product of innermost tiles) of a group in a program's steps. */
    public static long block(Group g, List<Step> steps) {
        long p = 1;
        for (int at : g.splitSteps()) p *= ((SplitStep) steps.get(at)).lengths().getLast();
        return p;
    }

    /**
     * The tile sizes of a split of {@code extent} with innermost tile {@code inner} (a divisor): the other levels a
     * factorisation of {@code extent / inner} drawn uniformly (the outer level implicit).
     */
    public static List<Integer> withInnermost(
            FactorizationMemo memo, long extent, int levels, int inner, SplittableRandom rng) {
        if (inner < 1 || extent % inner != 0)
            throw new KilnException("reduction tile " + inner + " does not divide a loop of extent " + extent);
        return InnermostTiles.around(memo, extent / inner, levels, inner, rng);
    }
}
