package dev.kiln.autoschedule.analysis;

import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.ir.Expr;
import dev.kiln.schedule.CacheReadStep;
import dev.kiln.schedule.CacheWriteStep;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.RfactorStep;
import dev.kiln.schedule.Stage;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The questions the sketch and annotation rules ask about a stage of a loop state (Ansor's
 * search-policy utilities, §3.3 of the notes). Operation-level questions go to the
 * {@link AccessAnalyzer} of the state's current operations; consumers and producers look
 * through inlined stages.
 */
public final class StagePredicates {
    private StagePredicates() {}

    /** A place to compute a stage: loop {@code iter} (current index) of stage {@code stage}. */
    public record Location(int stage, int iter) {}

    /** Whether the stage's loops are no longer one per axis (Ansor counts them: split or fused). */
    public static boolean isTiled(Stage st) {
        return !st.isPlaceholder() && st.leaves().size() != st.numRoots();
    }

    /** Whether some loop of the stage is not spatial. */
    public static boolean hasReduceIter(Stage st) {
        for (Iter it : st.iters()) if (it.kind() != IterKind.SPATIAL) return true;
        return false;
    }

    /**
     * Whether the stage, or a stage computed inside it, has a reduction loop bound to
     * {@code threadIdx.x} (a GPU cross-thread reduction).
     */
    public static boolean hasCrossThreadReduction(LoopState s, int id) {
        if (reductionOnThreadX(s.stage(id))) return true;
        for (int a : s.attachedTo(id)) if (reductionOnThreadX(s.stage(a))) return true;
        return false;
    }

    private static boolean reductionOnThreadX(Stage st) {
        for (Iter it : st.iters()) {
            if (it.kind() == IterKind.REDUCE && it.annotation() == IterAnnotation.THREAD_X) return true;
        }
        return false;
    }

    public static boolean isOutput(AccessAnalyzer a, LoopState s, int id) {
        return s.stage(id).output() || a.isOutput(s.stage(id).op());
    }

    public static boolean needsMultiLevelTiling(AccessAnalyzer a, LoopState s, int id) {
        return a.needsMultiLevelTiling(s.stage(id).op());
    }

    /**
     * Whether stage {@code id} is read by stage {@code consumer} without reuse across the consumer's spatial loops:
     * the consumer reads it directly, and every read's indices use every spatial axis of extent above 1 of the
     * consumer (a depthwise conv or a pooling of its padded input, a copy of it; not a conv, which reads the same
     * input element for every output channel). Such a consumer touches each element a few times at most, so
     * computing the whole stage first costs as much memory traffic as the consumer itself.
     */
    public static boolean isReadWithoutReuse(AccessAnalyzer a, LoopState s, int id, int consumer) {
        if (!(s.stage(consumer).op() instanceof ComputeOp c)) return false;
        return readsWithoutReuse(a.access(c), c, s.stage(id).op());
    }

    /**
     * Whether stage {@code id} reads one of the stages it reads directly ({@link #producers}, inputs included)
     * without reuse ({@link #isReadWithoutReuse}): a depthwise conv reading its (padded) input, not a conv or a
     * matmul, which read every input element for several outputs.
     */
    public static boolean readsAnInputWithoutReuse(AccessAnalyzer a, LoopState s, int id) {
        for (int p : producers(s, id)) if (isReadWithoutReuse(a, s, p, id)) return true;
        return false;
    }

    /**
     * {@link #isReadWithoutReuse} on one consumer's analysis ({@code OpAccess.of(consumer)}, no whole-state
     * analysis): whether {@code consumer} reads {@code producer} with every spatial axis of extent above 1.
     */
    public static boolean readsWithoutReuse(OpAccess consumerAccess, ComputeOp consumer, Operation producer) {
        List<List<Expr>> reads = consumerAccess.reads().get(producer);
        if (reads == null || reads.isEmpty()) return false;
        for (List<Expr> idx : reads) if (OpAccess.missesAnAxis(consumer, List.of(idx))) return false;
        return true;
    }

    public static boolean isStrictlyInlineable(AccessAnalyzer a, LoopState s, int id) {
        return a.isStrictlyInlineable(s.stage(id).op());
    }

    /** The stages that read stage {@code id}, looking through inlined stages, in stage order. */
    public static List<Integer> consumers(LoopState s, int id) {
        return List.copyOf(new TreeSet<>(s.consumers(id)));
    }

    /** The stages stage {@code id} reads, looking through inlined stages, in stage order. */
    public static List<Integer> producers(LoopState s, int id) {
        TreeSet<Integer> out = new TreeSet<>();
        collectProducers(s, id, out);
        return List.copyOf(out);
    }

    private static void collectProducers(LoopState s, int id, TreeSet<Integer> out) {
        for (int p : s.directProducers(id)) {
            if (s.stage(p).computeAt() == ComputeAtKind.INLINED) collectProducers(s, p, out);
            else out.add(p);
        }
    }

    /**
     * The single consumer of stage {@code id}; with several, the nearest stage that every one of them is, or is
     * computed inside (following compute_at attachments up to a root), if there is one; else -1.
     *
     * <p>Ansor looks one level up only (each consumer itself or the stage it is computed at). Kiln follows the whole
     * chain, so a stage read by an rfactor stage (computed at its reduction) and by the stage that reduction is
     * computed at can join them: softmax's exp, read by {@code softmax_sum.rf} (at {@code softmax_sum}, at the
     * normalisation's row loop) and by the normalisation, can be computed per row, where Ansor's rule leaves the whole
     * exponentiated matrix in memory between three loop nests.
     */
    public static int singleConsumerId(LoopState s, int id) {
        List<Integer> cs = consumers(s, id);
        if (cs.isEmpty()) return -1;
        if (cs.size() == 1) return cs.get(0);
        List<List<Integer>> chains = new ArrayList<>();
        for (int c : cs) chains.add(attachChain(s, c));
        for (int candidate : chains.get(0)) {
            boolean common = true;
            for (int k = 1; k < chains.size() && common; k++)
                common = chains.get(k).contains(candidate);
            if (common) return candidate;
        }
        return -1;
    }

    /** Stage {@code id}, the stage it is computed at, the one that one is computed at, ..., up to a root stage. */
    private static List<Integer> attachChain(LoopState s, int id) {
        List<Integer> chain = new ArrayList<>();
        for (int c = id; ; c = s.stage(c).attachStage()) {
            chain.add(c);
            if (s.stage(c).computeAt() != ComputeAtKind.ITER
                    || chain.size() > s.stages().size()) return chain;
        }
    }

    public static boolean elementwiseMatch(AccessAnalyzer a, LoopState s, int id, int target) {
        return a.elementwiseMatch(s.stage(id).op(), s.stage(target).op());
    }

    /**
     * The consumer of stage {@code id} if it is its only consumer, reads it element-wise
     * ({@link AccessAnalyzer#elementwiseMatch}), the two do not both reduce, and the consumer is
     * not a shared-memory copy; else -1.
     */
    public static int singleElementwiseMatchedConsumer(AccessAnalyzer a, LoopState s, int id) {
        List<Integer> cs = consumers(s, id);
        if (cs.size() != 1) return -1;
        int t = cs.get(0);
        if (!elementwiseMatch(a, s, id, t)) return -1;
        if (hasReduceIter(s.stage(id)) && hasReduceIter(s.stage(t))) return -1;
        if (s.stage(t).name().endsWith(".shared")) return -1;
        return t;
    }

    /** {products of the spatial loop extents, of the reduction loop extents}; unknown extents count 1. */
    public static long[] cumulativeSpaceAndReduceLength(Stage st) {
        long space = 1, reduce = 1;
        for (Iter it : st.iters()) {
            long e = it.extent() == null ? 1 : it.extent();
            if (it.kind() == IterKind.SPATIAL) space *= e;
            else if (it.kind() == IterKind.REDUCE) reduce *= e;
        }
        return new long[] {space, reduce};
    }

    /**
     * Whether the CPU rules should try rfactor: for a stage with data reuse, when its spatial
     * size S is at most its reduction size R and at most 16 × cores; for another reduction, when
     * R exceeds the number of cores.
     */
    public static boolean needsRfactor(AccessAnalyzer a, HardwareParams hw, LoopState s, int id) {
        Stage st = s.stage(id);
        if (st.isPlaceholder()) return false;
        long[] sr = cumulativeSpaceAndReduceLength(st);
        if (needsMultiLevelTiling(a, s, id)) return sr[0] <= sr[1] && sr[0] <= 16L * hw.numCores();
        if (sr[1] > 1) return sr[1] > hw.numCores();
        return false;
    }

    /** Whether stage {@code id} is the computing stage a cache_write step inserted. */
    public static boolean hasCacheWriteStage(LoopState s, int id) {
        return hasStageAddedBy(s, id, CacheWriteStep.class);
    }

    /** Whether stage {@code id} is the factored stage an rfactor step inserted. */
    public static boolean hasRfactorStage(LoopState s, int id) {
        return hasStageAddedBy(s, id, RfactorStep.class);
    }

    /**
     * Scans the history backwards for a step of {@code kind} on the stage, moving the stage id
     * back over every earlier stage-inserting step (Ansor's helper, whose adjustment treats the
     * three kinds alike).
     */
    private static boolean hasStageAddedBy(LoopState s, int id, Class<? extends Step> kind) {
        int stageId = id;
        List<Step> steps = s.steps();
        for (int i = steps.size() - 1; i >= 0; i--) {
            Step step = steps.get(i);
            if (kind.isInstance(step) && step.stageId() == stageId) return true;
            if (step instanceof CacheWriteStep || step instanceof CacheReadStep || step instanceof RfactorStep) {
                if (stageId > step.stageId()) stageId--;
            }
        }
        return false;
    }

    /**
     * Where stage {@code id} may be computed (Ansor's GetComputeLocationCandidates): loops of its
     * single consumer, outermost first, stopping at the first reduction loop of an untiled
     * consumer or at a spatial loop after a reduction loop of a tiled one (never inside the
     * inner tiles), at an unrolled loop, and right after a loop that already has stages
     * attached; loops of extent 1 are skipped, and so are spatial {@code *.0} loops when the
     * consumer is itself computed inside another stage. Then, if the consumer is computed inside
     * a stage X, the loops of X up to its first reduction loop or attach point. Extents are the
     * state's; an unknown extent is not 1.
     */
    public static List<Location> computeLocationCandidates(LoopState s, int id) {
        int target = singleConsumerId(s, id);
        if (target < 0) return List.of();
        Stage t = s.stage(target);
        List<Location> out = new ArrayList<>();
        boolean targetAttached = t.computeAt() == ComputeAtKind.ITER;
        boolean tiled = isTiled(t);
        boolean visitedReduce = false;
        List<Iter> iters = t.iters();
        for (int i = 0; i < iters.size(); i++) {
            Iter it = iters.get(i);
            if (it.kind() == IterKind.REDUCE) {
                visitedReduce = true;
                if (!tiled) break;
            } else if (it.kind() == IterKind.SPATIAL && visitedReduce) {
                break;
            }
            if (it.annotation() == IterAnnotation.UNROLL) break;
            if (it.extent() != null && it.extent() == 1) continue;
            if (targetAttached && it.kind() == IterKind.SPATIAL && it.name().endsWith(".0")) continue;
            out.add(new Location(target, i));
            if (hasAttached(s, target, it)) break;
        }
        if (targetAttached) {
            int x = t.attachStage();
            List<Iter> xs = s.stage(x).iters();
            for (int i = 0; i < xs.size(); i++) {
                Iter it = xs.get(i);
                if (it.kind() == IterKind.REDUCE || hasAttached(s, x, it)) break;
                if (it.annotation() == IterAnnotation.UNROLL) break;
                if (it.extent() != null && it.extent() == 1) continue;
                out.add(new Location(x, i));
            }
        }
        return out;
    }

    /**
     * How many times stage {@code id}'s loop nest runs: the product of the extents of the loops around it, out to the
     * root through every attach point (1 at root, and 1 at a loop whose enclosing loops all have extent 1: such a
     * stage computes its whole result at once, as at root). A loop of unknown extent counts as 2; the product
     * saturates.
     */
    public static long enclosingTrips(LoopState s, int id) {
        Stage st = s.stage(id);
        if (st.computeAt() != ComputeAtKind.ITER) return 1;
        List<Iter> iters = s.stage(st.attachStage()).iters();
        int at = 0;
        while (at < iters.size() - 1 && iters.get(at).uid() != st.attachIter()) at++;
        return tripsAt(s, st.attachStage(), at);
    }

    /** How many times a stage computed at loop {@code iter} (current index) of stage {@code stage} runs. */
    public static long tripsAt(LoopState s, int stage, int iter) {
        long trips = enclosingTrips(s, stage);
        List<Iter> iters = s.stage(stage).iters();
        for (int i = 0; i <= iter && i < iters.size(); i++) {
            Long extent = iters.get(i).extent();
            long e = extent == null ? 2 : Math.max(1, extent);
            trips = trips > Long.MAX_VALUE / e ? Long.MAX_VALUE : trips * e;
        }
        return trips;
    }

    /** Whether some stage is computed at loop {@code it} of stage {@code stage}. */
    public static boolean hasAttached(LoopState s, int stage, Iter it) {
        for (int a : s.attachedTo(stage)) if (s.stage(a).attachIter() == it.uid()) return true;
        return false;
    }
}
