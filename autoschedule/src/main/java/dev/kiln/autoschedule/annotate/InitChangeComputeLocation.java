package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.InferBound;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.OpAccess;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.autoschedule.sketch.AddCacheReadPack;
import dev.kiln.autoschedule.sketch.RowChains;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.ComputeInlineStep;
import dev.kiln.schedule.ComputeRootStep;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeOp;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Picks a random place to compute every stage the sketch left alone (Ansor's
 * InitChangeComputeLocation). From the last stage to the first, each compute stage that is not
 * inlined, not tiled and without data reuse draws r uniformly from [0, n + 2), n being the
 * number of {@link StagePredicates#computeLocationCandidates candidates}: r = 0 inlines it if it
 * does not reduce and is currently computed inside another stage (Ansor's quirk: a root stage
 * stays where it is), r = 1 computes it at root, r ≥ 2 at candidate r − 2. Then bounds are
 * inferred ({@link InferBound}); the rules after this one see the inferred extents.
 *
 * <p>Kiln ({@link #keepsOffRoot}): a padding stage that its consumer reads without reuse (the padded input of a
 * depthwise conv or a pooling) is computed at one of its candidates, drawn uniformly, never at root: a whole padded
 * copy at root costs such a consumer as much memory traffic as the consumer itself, and it lives in a heap temporary
 * that the tuner's repeats keep warm and a network meets cold (MobileNet-V2 at 1 thread, docs/PERFORMANCE.md: its
 * depthwise convs' tuned times 9-18% lower in sum, the network 10% faster on one seed). Nor is it inlined: in those
 * logs every depthwise task measured its best inlined program slower than its best computing the padding inside.
 *
 * <p>Kiln: a packed copy that its sketch placed ({@link AddCacheReadPack#isPackingCopy}) keeps
 * that place here (its location is part of the sketch's structure; MutateComputeLocation may
 * still move it), and so does a stage that a row-fusion sketch computes per block of output rows
 * ({@link RowChains#isRowFused}).
 *
 * <p>Ansor looks at the extents of a state whose split loops have no ranges yet (so no tiled
 * loop counts as extent 1); Kiln's concrete state knows them, computed as if every stage were at
 * root, and uses them to skip extent-1 locations.
 */
public record InitChangeComputeLocation(boolean paddingOffRoot) implements InitRule {
    public static final String NAME = "InitChangeComputeLocation";

    /** Kiln's rule: Ansor's, with a padding stage read without reuse kept off root ({@link #keepsOffRoot}). */
    public InitChangeComputeLocation() {
        this(true);
    }

    /** Ansor's rule alone. */
    public static InitChangeComputeLocation ansor() {
        return new InitChangeComputeLocation(false);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public LoopState apply(SearchTask task, LoopState state, SplittableRandom rng) {
        AccessAnalyzer access = AccessAnalyzer.of(state);
        LoopState s = state;
        try {
            for (int id = s.stages().size() - 1; id >= 0; id--) {
                Stage st = s.stage(id);
                if (st.isPlaceholder() || st.computeAt() == ComputeAtKind.INLINED) continue;
                if (StagePredicates.isTiled(st) || StagePredicates.needsMultiLevelTiling(access, s, id)) continue;
                if (st.computeAt() == ComputeAtKind.ITER && AddCacheReadPack.isPackingCopy(s, id)) continue;
                if (RowChains.isRowFused(access, s, id)) continue;
                List<StagePredicates.Location> candidates = StagePredicates.computeLocationCandidates(s, id);
                if (paddingOffRoot && !candidates.isEmpty() && keepsOffRoot(s, id)) {
                    StagePredicates.Location at = candidates.get(rng.nextInt(candidates.size()));
                    s = s.apply(new ComputeAtStep(id, at.stage(), at.iter()));
                    continue;
                }
                int choice = rng.nextInt(candidates.size() + 2);
                if (choice == 0) {
                    if (!StagePredicates.hasReduceIter(st) && st.computeAt() == ComputeAtKind.ITER) {
                        s = s.apply(new ComputeInlineStep(id));
                    }
                } else if (choice == 1) {
                    s = s.apply(new ComputeRootStep(id));
                } else {
                    StagePredicates.Location at = candidates.get(choice - 2);
                    s = s.apply(new ComputeAtStep(id, at.stage(), at.iter()));
                }
            }
            return InferBound.apply(s);
        } catch (KilnException e) {
            throw new InvalidSample(NAME, e.getMessage());
        }
    }

    /**
     * Whether {@code s} computes a padding stage that {@link #keepsOffRoot} keeps inside its consumer as if at root:
     * at root, or at a loop whose enclosing loops all have extent 1 ({@link StagePredicates#enclosingTrips} is 1), so
     * that the whole padded copy is made at once, while a location inside the consumer that runs more than once
     * exists. Such programs arise after sampling: a tile-size mutation can shrink the loops around the padding's
     * location to extent 1 (in a 2000-trial MobileNet-V2 log, the best programs of its two 28x28x192 depthwise tasks
     * padded their whole 0.6 MB input at once this way, and in the network ran at twice their time called again). The
     * CPU's evolution refuses these children ({@code Children.of}), as it refuses nested parallel loops.
     */
    public static boolean padsWholeInputAtOnce(LoopState s) {
        for (int id = 0; id < s.stages().size(); id++) {
            Stage st = s.stage(id);
            if (st.isPlaceholder() || st.computeAt() == ComputeAtKind.INLINED) continue;
            if (StagePredicates.enclosingTrips(s, id) > 1 || !keepsOffRoot(s, id)) continue;
            for (StagePredicates.Location at : StagePredicates.computeLocationCandidates(s, id)) {
                if (StagePredicates.tripsAt(s, at.stage(), at.iter()) > 1) return true;
            }
        }
        return false;
    }

    /**
     * Kiln's rule: a padding stage (it reduces nothing and selects between a read and a value) whose single
     * consumer reads it without reuse ({@link StagePredicates#isReadWithoutReuse}: a depthwise conv, a pooling) is
     * computed inside its consumer, never at root.
     */
    static boolean keepsOffRoot(LoopState s, int id) {
        // asked of every evolution child (padsWholeInputAtOnce): the two operations analysed alone, not the state
        Stage st = s.stage(id);
        if (StagePredicates.hasReduceIter(st) || !OpAccess.of(st.op()).hasBranch()) return false;
        int consumer = StagePredicates.singleConsumerId(s, id);
        return consumer >= 0
                && s.stage(consumer).op() instanceof ComputeOp c
                && StagePredicates.readsWithoutReuse(OpAccess.of(c), c, st.op());
    }
}
