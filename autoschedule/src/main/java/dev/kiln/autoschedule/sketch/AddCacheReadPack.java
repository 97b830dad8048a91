package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Var;
import dev.kiln.schedule.CacheReadStep;
import dev.kiln.schedule.CacheWriteStep;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.RfactorStep;
import dev.kiln.schedule.ScheduleException;
import dev.kiln.schedule.Stage;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeOp;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Packing of an operand into the block the register tile reads (Kiln's CPU rule; Ansor's CPU
 * sketches have no cache_read). A stage whose single consumer is a multi-level-tiled reduction,
 * which reads it with its innermost spatial loop on the operand's last dimension (the vector loads
 * of the register tile, {@code B[k, j]} of a matmul) and without one of its spatial loops (the
 * block is reused across that loop, the rows {@code i} of a matmul), gets a {@code .local} copy
 * computed at the consumer's first reduction loop ({@code k.0}): each tile of the reduction copies
 * the {@code k.1 x j} block it reads into a small contiguous buffer, so the micro-kernel's loads
 * walk one dense block instead of rows a whole matrix row apart (cache-set and TLB conflicts on
 * power-of-two rows), and the copy is amortised over the rows of the tile. The state without the
 * copy is kept too (Apply), so the search chooses. The copy keeps its sketch location in the
 * random annotation ({@link #isPackingCopy}); mutation may move it. A layout-free placeholder of the task (a constant
 * weight, {@link SearchTask#withLayoutFree}) gets no copy: the layout rewrite packs it once in the order of the tiles.
 *
 * <p>With {@code packRows} ({@link #withRows()}), the other operand of such a reader, read along
 * the reduction ({@code A[i, k]} of a matmul: its last index a reduction axis, the vector axis
 * nowhere in it, so the block is reused across the vector loop), is packed the same way where the
 * first operand already is (issue 13, GotoBLAS packs both): its copy at {@code k.0} holds the
 * {@code i x k.1} block of the tile with rows {@code k.1} floats apart instead of a matrix row, so
 * the micro-kernel's broadcasts read a few dense rows of one small block (no 4 KB-stride set
 * conflicts, one page instead of one per row), and with K-blocking the MC x KC block stays in cache
 * across every column block. The copy keeps the operand's dimension order (a cache_read cannot
 * transpose), so it is row-major, not in register-tile order. A matmul then has sketches without a
 * copy, with B's, and with both. K-blocking moves that copy to the row block ({@code
 * KBlocking.placeRowCopies}).
 */
public record AddCacheReadPack(boolean packRows) implements SketchRule {
    /** The memory scope (and name suffix) of the packed copy. */
    public static final String SCOPE = "local";

    /**
     * Kiln's default: only the operand read with the vector axis is packed. Packing the other one
     * too ({@code packRows}, {@link #withRows()}) did not help in GemmStudy's same-process A/B (a
     * row-major copy, under load), so it is not in the default space yet.
     */
    public AddCacheReadPack() {
        this(false);
    }

    /** The rule that also packs the operand read along the reduction where the other one is packed. */
    public static AddCacheReadPack withRows() {
        return new AddCacheReadPack(true);
    }

    @Override
    public String name() {
        return "AddCacheReadPack";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        if (task.target().kind().isGpu()) return Condition.SKIP;
        Stage st = state.stage(stageId);
        if (st.op().outputs().size() != 1) return Condition.SKIP;
        // a layout-free weight is packed once for the tiles (the layout rewrite): a per-call copy would only repeat it
        if (st.isPlaceholder() && task.layoutFreeTensors(state.dag()).stream().anyMatch(t -> t.op() == st.op())) {
            return Condition.SKIP;
        }
        List<Integer> readers = state.directConsumers(stageId);
        if (readers.size() != 1) return Condition.SKIP;
        int reader = readers.getFirst();
        Stage r = state.stage(reader);
        if (r.isPlaceholder()
                || !StagePredicates.needsMultiLevelTiling(access, state, reader)
                || !StagePredicates.isTiled(r)
                || firstReduceLoop(r) < 0) return Condition.SKIP;
        if (packable(access, st, r)) return Condition.APPLY;
        return packRows && packableRows(access, st, r) && hasPackedOperand(state, reader)
                ? Condition.APPLY
                : Condition.SKIP;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        int reader = state.directConsumers(stageId).getFirst();
        LoopState s = state.apply(new CacheReadStep(stageId, SCOPE, List.of(reader)));
        int copy = stageId + 1;
        int r = reader + 1;
        int at = firstReduceLoop(s.stage(r));
        if (at < 0) throw new ScheduleException("reader '" + s.stage(r).name() + "' has no reduction loop to pack at");
        s = s.apply(new ComputeAtStep(copy, r, at));
        return List.of(new Derivation(s, stageId - 1));
    }

    /**
     * Whether the reader reads the stage's last dimension with its innermost spatial axis alone and
     * leaves out one of its spatial axes (reuse), in every read.
     */
    static boolean packable(AccessAnalyzer access, Stage producer, Stage reader) {
        ComputeOp op = reader.computeOp();
        List<List<Expr>> reads = access.readFrom(op).get(producer.op());
        if (reads == null || reads.isEmpty() || op.axes().isEmpty()) return false;
        IterVar vector = op.axes().getLast();
        for (List<Expr> idx : reads) {
            if (idx.isEmpty() || !(idx.getLast() instanceof Var v) || v != vector) return false;
            Set<Var> used = new HashSet<>();
            for (Expr e : idx) if (e instanceof Var x) used.add(x);
            boolean reused = false;
            for (IterVar a : op.axes()) reused |= !used.contains(a) && a.extent() > 1;
            if (!reused) return false;
        }
        return true;
    }

    /**
     * Whether the reader reads the stage along a reduction (its last index is one of the reader's
     * reduction axes) and never with its vector axis (the block is reused across the vector loop), in
     * every read.
     */
    public static boolean packableRows(AccessAnalyzer access, Stage producer, Stage reader) {
        ComputeOp op = reader.computeOp();
        List<List<Expr>> reads = access.readFrom(op).get(producer.op());
        if (reads == null || reads.isEmpty() || op.axes().isEmpty()) return false;
        IterVar vector = op.axes().getLast();
        if (vector.extent() <= 1) return false;
        for (List<Expr> idx : reads) {
            if (idx.isEmpty()
                    || !(idx.getLast() instanceof Var v)
                    || !op.reduceAxes().contains(v)) return false;
            for (Expr e : idx) if (Exprs.uses(e, vector)) return false;
        }
        return true;
    }

    /** Whether a packing copy is already computed inside the reader (its vector-side operand's). */
    static boolean hasPackedOperand(LoopState s, int reader) {
        for (int id : s.attachedTo(reader)) if (isPackingCopy(s, id)) return true;
        return false;
    }

    /** The index of the stage's first reduction loop ({@code k.0} after multi-level tiling), or -1. */
    static int firstReduceLoop(Stage st) {
        for (int i = 0; i < st.iters().size(); i++) if (st.iter(i).kind() == IterKind.REDUCE) return i;
        return -1;
    }

    /**
     * Whether stage {@code id} of the state is a copy made by a {@code .local} cache_read step
     * (the ids of the copies are followed through later stage-inserting steps).
     */
    public static boolean isPackingCopy(LoopState s, int id) {
        Set<Integer> copies = new HashSet<>();
        for (Step step : s.steps()) {
            int inserted;
            if (step instanceof CacheReadStep cr) inserted = cr.stageId() + 1;
            else if (step instanceof CacheWriteStep || step instanceof RfactorStep) inserted = step.stageId();
            else continue;
            Set<Integer> shifted = new HashSet<>();
            for (int c : copies) shifted.add(c >= inserted ? c + 1 : c);
            copies = shifted;
            if (step instanceof CacheReadStep cr && cr.scope().equals(SCOPE)) copies.add(inserted);
        }
        return copies.contains(id);
    }
}
