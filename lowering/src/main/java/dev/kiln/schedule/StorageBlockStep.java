package dev.kiln.schedule;

import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.TensorRead;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code SB}: blocked storage. Dimension {@code dim} of the stage's buffer is stored in blocks of {@code factor}
 * elements: the block index becomes the outermost dimension and the position inside the block the innermost one, the
 * other dimensions keep their order between them. A packed copy {@code B.local[k, j]} of a matmul's right operand
 * blocked on {@code j} by the register tile's width is GotoBLAS's packed panel, {@code [j / 32][k][j % 32]}: the
 * micro-kernel reads one contiguous run of 32 floats per reduction step instead of a row of the whole block, so a
 * panel of 256 steps is 32 KB of consecutive memory (it stays in L1) where the row-major block put every row at the
 * same cache sets. Blocked on its row dimension by the tile's rows, the copy of the left operand {@code A.local[i, k]}
 * becomes {@code [i / 8][k][i % 8]}: the tile's broadcasts read 8 consecutive floats per step. Where the block does
 * not divide the buffer's extent, the last block is padded (never read).
 *
 * <p>With {@code factor} 0 the block is the extent of the innermost loop of the stage's one reader over the axis that
 * indexes dimension {@code dim}, taken when the schedule is lowered, so it follows tile sizes that change after the
 * step (the search's mutations). Only the layout changes, never the values: a schedule with this step computes what
 * it computes without it.
 */
public record StorageBlockStep(int stageId, int dim, int factor) implements Step {
    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        int rank = st.computeOp().axes().size();
        if (dim < 0 || dim >= rank) {
            throw new ScheduleException(
                    "storage_block of dimension " + dim + ": stage '" + st.name() + "' has " + rank + " dimensions");
        }
        if (st.output()) {
            throw new ScheduleException("storage_block of '" + st.name() + "': it is an output of the function, whose "
                    + "layout is the caller's");
        }
        if (factor < 0) {
            throw new ScheduleException("storage_block of '" + st.name() + "' needs a factor >= 0 (0: the reader's "
                    + "innermost tile), got " + factor);
        }
        if (st.storageAlign() != null) {
            throw new ScheduleException("stage '" + st.name() + "' has a storage_align; a buffer is either padded or "
                    + "blocked, not both");
        }
        if (factor == 0) readerAxis(s, stageId, dim);
        return s.withStage(stageId, st.withStorageBlock(new Stage.StorageBlock(dim, factor)));
    }

    @Override
    public String describe(LoopState s) {
        return "storage_block(" + StepChecks.stageName(s, stageId) + ", dim " + dim + ", "
                + (factor == 0 ? "innermost tile" : String.valueOf(factor)) + ")";
    }

    /**
     * The block of stage {@code id}'s buffer in state {@code s}: its explicit factor, or the extent of the innermost
     * loop of its reader over the blocked dimension's axis; null when the stage's buffer is not blocked.
     */
    public static Long factorIn(LoopState s, int id) {
        Stage st = s.stage(id);
        Stage.StorageBlock sb = st.storageBlock();
        if (sb == null) return null;
        if (sb.factor() > 0) return (long) sb.factor();
        int[] at = readerAxis(s, id, sb.dim());
        Stage reader = s.stage(at[0]);
        int uid = at[1];
        for (int inner = innerPart(st, reader, uid); inner >= 0; inner = innerPart(st, reader, uid)) uid = inner;
        Long e = reader.all().get(uid).extent();
        if (e == null) {
            throw new ScheduleException("storage_block of '" + st.name() + "': the extent of loop '"
                    + reader.all().get(uid).name() + "' of its reader '" + reader.name() + "' is not decided yet");
        }
        return e;
    }

    /**
     * The inner loop of the split of loop {@code uid} of the reader, or -1 when it is not split; a loop fused before
     * it is split has no innermost tile.
     */
    private static int innerPart(Stage st, Stage reader, int uid) {
        for (IterRelation r : reader.relations()) {
            if (r instanceof IterRelation.Split sp && sp.parent() == uid) return sp.inner();
            if (r instanceof IterRelation.Fuse f && f.parents().contains(uid)) {
                throw new ScheduleException("storage_block of '" + st.name() + "': loop '"
                        + reader.all().get(uid).name() + "' of its reader '" + reader.name()
                        + "' is fused before it is split, so it has no innermost tile; give the factor");
            }
        }
        return -1;
    }

    /**
     * The reader of stage {@code id} and the uid of its root loop that indexes the blocked dimension in every read:
     * the stage must have one reader, which reads it with one of its own axes at that dimension.
     */
    private static int[] readerAxis(LoopState s, int id, int dim) {
        Stage st = s.stage(id);
        List<Integer> readers = s.directConsumers(id);
        if (readers.size() != 1) {
            throw new ScheduleException("storage_block of '" + st.name() + "' with the reader's tile needs one reader, "
                    + "it has " + readers.size() + "; give the factor");
        }
        Stage reader = s.stage(readers.getFirst());
        ComputeOp op = reader.computeOp();
        Tensor t = st.op().output(0);
        List<Expr> at = new ArrayList<>();
        for (Expr b : op.bodies()) {
            Exprs.forEach(b, x -> {
                if (x instanceof TensorRead r && r.tensor() == t)
                    at.add(r.indices().get(dim));
            });
        }
        List<IterVar> axes = new ArrayList<>(op.axes());
        axes.addAll(op.reduceAxes());
        int uid = -1;
        for (Expr e : at) {
            int u = e instanceof IterVar v ? axes.indexOf(v) : -1;
            if (u < 0 || (uid >= 0 && u != uid)) {
                throw new ScheduleException("storage_block of '" + st.name() + "': its reader '" + reader.name()
                        + "' reads dimension " + dim + " at " + e + ", not at one of its axes in every read; give the"
                        + " factor");
            }
            uid = u;
        }
        if (uid < 0) {
            throw new ScheduleException(
                    "storage_block of '" + st.name() + "': its reader '" + reader.name() + "' does not read it");
        }
        return new int[] {readers.getFirst(), uid};
    }
}
