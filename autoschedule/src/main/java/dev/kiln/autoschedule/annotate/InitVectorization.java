package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.TensorRead;
import dev.kiln.schedule.AnnotationStep;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.FuseStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeOp;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Vectorises the innermost loops of every stage with loops (Ansor's InitVectorization). From the
 * innermost loop outwards it counts the loops that may be fused: it stops at a loop with stages
 * attached, a reduction loop or an annotated loop, after one loop if the stage is tiled, and
 * before the product of extents would exceed
 * {@link dev.kiln.autoschedule.HardwareParams#maxVectorizeSize()}. With c > 1 such loops it draws
 * c' = 1 + rand mod (c − 1), so — Ansor's quirk, kept — never all c; it then fuses the innermost
 * c' loops (if more than one) and vectorises the result.
 *
 * <p>Kiln: the innermost loop of a tiled stage is also vectorised when it is longer than
 * {@code maxVectorizeSize} but a whole number of vectors (or half vectors) of the stage's element type and at most
 * {@link dev.kiln.autoschedule.HardwareParams#maxInnermostSplitFactor()} long. Ansor's limit
 * (16) is one AVX-512 vector of float32, so without this a register tile two or four vectors wide
 * (the 8 x 32 and 4 x 64 tiles of {@link RegisterTileSizes}) would be left to LLVM's
 * auto-vectoriser.
 */
public record InitVectorization(boolean wideRegisterTileRows) implements InitRule {
    public static final String NAME = "InitVectorization";

    /** Kiln's rule: register-tile rows wider than {@code maxVectorizeSize} are vectorised too. */
    public InitVectorization() {
        this(true);
    }

    /** Ansor's rule alone. */
    public static InitVectorization ansor() {
        return new InitVectorization(false);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public LoopState apply(SearchTask task, LoopState state, SplittableRandom rng) {
        LoopState s = state;
        int max = task.hardware().maxVectorizeSize();
        try {
            for (int id = 0; id < s.stages().size(); id++) {
                Stage st = s.stage(id);
                if (st.isPlaceholder() || st.computeAt() == ComputeAtKind.INLINED) continue;
                List<Iter> iters = st.iters();
                long prod = 1;
                int fusible = 0;
                while (fusible < iters.size()) {
                    Iter it = iters.get(iters.size() - 1 - fusible);
                    if (StagePredicates.hasAttached(s, id, it)) break;
                    if (it.kind() == IterKind.REDUCE || it.annotation() != IterAnnotation.NONE) break;
                    if (StagePredicates.isTiled(st) && fusible != 0) break;
                    prod *= InitParallel.extent(it);
                    boolean registerTileRow = wideRegisterTileRows
                            && fusible == 0
                            && !task.target().kind().isGpu()
                            && StagePredicates.isTiled(st)
                            && wholeVectors(task, st, prod);
                    if (prod > max && !registerTileRow) break;
                    fusible++;
                }
                if (fusible > 1) fusible = 1 + rng.nextInt(fusible - 1);
                if (fusible == 0 && wideRegisterTileRows && longContiguousRow(task, s, id)) {
                    s = s.apply(new AnnotationStep(id, iters.size() - 1, IterAnnotation.VECTORIZE));
                    continue;
                }
                if (fusible == 0) continue;
                int first = iters.size() - fusible;
                if (fusible > 1) {
                    List<Integer> ids = new ArrayList<>();
                    for (int k = first; k < iters.size(); k++) ids.add(k);
                    s = s.apply(new FuseStep(id, ids));
                }
                s = s.apply(new AnnotationStep(id, first, IterAnnotation.VECTORIZE));
            }
            return s;
        } catch (KilnException e) {
            throw new InvalidSample(NAME, e.getMessage());
        }
    }

    /**
     * Kiln: whether the innermost loop of an untiled stage is a row longer than Ansor's limit that the LLVM backend
     * should vectorise anyway: its last axis, unannotated, with no stage attached, a whole number of vectors long,
     * and every read indexing by it only at its last, unit-stride index (so each lane reads the next element; a
     * transposing copy or a padded read is left alone). Ansor leaves such a row (softmax's {@code exp(x - max)} over
     * 1024 columns, computed per row of its consumer) to LLVM's auto-vectoriser, which vectorises the loop Kiln wrote
     * for one element; vectorised by Kiln it is the code of the vector loop, so {@code exp} scales by {@code
     * vscalefps}, and the cost model sees the vectors (SFM 1024: 0.39 -> 0.32 ms, docs/PERFORMANCE.md). The JVM
     * backend and GPUs keep Ansor's rule.
     */
    public static boolean longContiguousRow(SearchTask task, LoopState s, int id) {
        if (task.target().kind().isGpu() || CheckJvmTiles.isJvm(task.target())) return false;
        Stage st = s.stage(id);
        if (StagePredicates.isTiled(st) || st.iters().isEmpty()) return false;
        ComputeOp op = st.computeOp();
        Iter it = st.iters().getLast();
        if (op.axes().isEmpty() || it.uid() != op.axes().size() - 1) return false;
        if (it.kind() != IterKind.SPATIAL || it.annotation() != IterAnnotation.NONE) return false;
        if (StagePredicates.hasAttached(s, id, it)) return false;
        long extent = InitParallel.extent(it);
        int lanes = task.hardware().lanes(op.outputs().getFirst().dtype().bytes());
        if (extent <= task.hardware().maxVectorizeSize() || extent % lanes != 0) return false;
        IterVar axis = op.axes().getLast();
        boolean[] ok = {true};
        for (Expr b : op.bodies()) {
            Exprs.forEach(b, x -> {
                if (!(x instanceof TensorRead r)) return;
                List<Expr> idx = r.indices();
                for (int d = 0; d < idx.size(); d++) {
                    boolean last = d == idx.size() - 1;
                    if (last ? !idx.get(d).equals(axis) && Exprs.uses(idx.get(d), axis) : Exprs.uses(idx.get(d), axis))
                        ok[0] = false;
                }
            });
        }
        return ok[0];
    }

    /**
     * Whether {@code extent} elements of the stage's type are whole vectors, or whole half vectors where the register
     * tiles take them ({@link RegisterTileSizes#innermost}: a 24-wide row is a zmm and a ymm), within the
     * innermost-tile limit.
     */
    static boolean wholeVectors(SearchTask task, Stage st, long extent) {
        int lanes = task.hardware()
                .lanes(st.computeOp().outputs().getFirst().dtype().bytes());
        long unit = RegisterTileSizes.halfVectors(lanes) ? lanes / 2 : lanes;
        return extent > 0 && extent % unit == 0 && extent <= task.hardware().maxInnermostSplitFactor();
    }
}
