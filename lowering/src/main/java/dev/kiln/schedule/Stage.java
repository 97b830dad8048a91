package dev.kiln.schedule;

import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import dev.kiln.te.PlaceholderOp;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One operation in the light loop state: its loops (leaves, outermost first), how they derive
 * from the original axes, where it is computed, and its attributes.
 *
 * @param op        the operation (replaced when cache_read, cache_write or rfactor rewrite the graph)
 * @param output    whether the stage computes an output of the DAG (outputs stay at root)
 * @param all       every loop the stage ever had, indexed by uid; uids 0..numRoots-1 are the original
 *                  axes (spatial axes, then reduce axes)
 * @param leaves    the uids of the current loops, outermost first
 * @param relations how non-root loops derive from their parents
 * @param attachStage the stage this one is computed inside (-1 unless {@code computeAt == ITER})
 * @param attachIter  the uid of that stage's loop
 * @param autoUnrollMaxStep Ansor's auto_unroll_max_step pragma (0: none)
 * @param storageAlign  the storage_align of the stage's buffer, or null
 * @param storageBlock  the blocked storage of the stage's buffer ({@link StorageBlockStep}), or null
 * @param scope     the memory scope of the stage's buffer
 * @param tensorized the tensorized loop nest, or null
 */
public record Stage(
        Operation op,
        boolean output,
        int numRoots,
        List<Iter> all,
        List<Integer> leaves,
        List<IterRelation> relations,
        ComputeAtKind computeAt,
        int attachStage,
        int attachIter,
        int autoUnrollMaxStep,
        StorageAlign storageAlign,
        StorageBlock storageBlock,
        MemoryScope scope,
        Tensorized tensorized) {

    /** storage_align(dim, factor, offset): the stride of {@code dim} is padded to {@code factor*k + offset}. */
    public record StorageAlign(int dim, int factor, int offset) {}

    /**
     * storage_block(dim, factor): dimension {@code dim} of the buffer is stored in blocks of {@code factor}, the block
     * index outermost and the position in the block innermost; factor 0 takes the extent of the innermost loop of the
     * stage's reader over that dimension ({@link StorageBlockStep}).
     */
    public record StorageBlock(int dim, int factor) {}

    /** tensorize: the loop nest from loop {@code iterUid} inward runs intrinsic {@code intrinsic}. */
    public record Tensorized(int iterUid, String intrinsic) {}

    public Stage {
        Objects.requireNonNull(op, "op");
        all = List.copyOf(all);
        leaves = List.copyOf(leaves);
        relations = List.copyOf(relations);
        Objects.requireNonNull(computeAt, "computeAt");
        Objects.requireNonNull(scope, "scope");
    }

    /** The stage of an operation before any step: one loop per axis, at root. */
    public static Stage initial(Operation op, boolean output) {
        return initial(op, output, MemoryScope.GLOBAL);
    }

    static Stage initial(Operation op, boolean output, MemoryScope scope) {
        List<Iter> iters = new ArrayList<>();
        if (op instanceof ComputeOp c) {
            for (IterVar a : c.axes())
                iters.add(new Iter(iters.size(), a.name(), a.extent(), IterKind.SPATIAL, IterAnnotation.NONE));
            for (IterVar a : c.reduceAxes())
                iters.add(new Iter(iters.size(), a.name(), a.extent(), IterKind.REDUCE, IterAnnotation.NONE));
        }
        List<Integer> leaves = iters.stream().map(Iter::uid).toList();
        return new Stage(
                op,
                output,
                iters.size(),
                iters,
                leaves,
                List.of(),
                ComputeAtKind.ROOT,
                -1,
                -1,
                0,
                null,
                null,
                scope,
                null);
    }

    public String name() {
        return op.name();
    }

    public boolean isPlaceholder() {
        return op instanceof PlaceholderOp;
    }

    public ComputeOp computeOp() {
        if (op instanceof ComputeOp c) return c;
        throw new KilnException("stage '" + op.name() + "' is a placeholder and has no loops");
    }

    /** The current loops, outermost first. */
    public List<Iter> iters() {
        return leaves.stream().map(all::get).toList();
    }

    public Iter iter(int index) {
        if (index < 0 || index >= leaves.size()) {
            throw new KilnException(
                    "stage '" + name() + "' has " + leaves.size() + " loops; there is no loop " + index);
        }
        return all.get(leaves.get(index));
    }

    /** Position of the loop with this uid among the current loops, or -1. */
    public int indexOfUid(int uid) {
        return leaves.indexOf(uid);
    }

    /** Position of the loop called {@code name}; {@code x.outer}/{@code x.inner} also find {@code x.0}/{@code x.1}. */
    public int indexOf(String name) {
        if (isPlaceholder()) {
            throw new KilnException("stage '" + name()
                    + "' is a placeholder (an input) and has no loops; there is no loop '" + name + "'");
        }
        int found = -1;
        for (int i = 0; i < leaves.size(); i++) {
            if (matches(all.get(leaves.get(i)).name(), name)) {
                if (found >= 0) throw new KilnException("stage '" + name() + "' has two loops named '" + name + "'");
                found = i;
            }
        }
        if (found < 0) {
            throw new KilnException("stage '" + name() + "' has no loop named '" + name + "'; its loops are "
                    + iters().stream().map(Iter::name).toList());
        }
        return found;
    }

    private static boolean matches(String actual, String wanted) {
        if (actual.equals(wanted)) return true;
        if (wanted.endsWith(".outer")) return actual.equals(wanted.substring(0, wanted.length() - 6) + ".0");
        if (wanted.endsWith(".inner")) return actual.equals(wanted.substring(0, wanted.length() - 6) + ".1");
        return false;
    }

    /** Whether any loop other than the original axes exists (the stage was split or fused). */
    public boolean isTiled() {
        return !relations.isEmpty();
    }

    /** Whether every loop has a known extent. */
    public boolean isConcrete() {
        return all.stream().allMatch(Iter::hasExtent);
    }

    Stage with(List<Iter> all, List<Integer> leaves, List<IterRelation> relations) {
        return new Stage(
                op,
                output,
                numRoots,
                all,
                leaves,
                relations,
                computeAt,
                attachStage,
                attachIter,
                autoUnrollMaxStep,
                storageAlign,
                storageBlock,
                scope,
                tensorized);
    }

    Stage withLeaves(List<Integer> newLeaves) {
        return with(all, newLeaves, relations);
    }

    Stage withIter(Iter it) {
        List<Iter> a = new ArrayList<>(all);
        a.set(it.uid(), it);
        return with(a, leaves, relations);
    }

    Stage withComputeAt(ComputeAtKind kind, int stage, int iterUid) {
        return new Stage(
                op,
                output,
                numRoots,
                all,
                leaves,
                relations,
                kind,
                stage,
                iterUid,
                autoUnrollMaxStep,
                storageAlign,
                storageBlock,
                scope,
                tensorized);
    }

    Stage withAutoUnroll(int steps) {
        return rebuilt(op, steps, storageAlign, storageBlock, tensorized);
    }

    Stage withStorageAlign(StorageAlign sa) {
        return rebuilt(op, autoUnrollMaxStep, sa, storageBlock, tensorized);
    }

    Stage withStorageBlock(StorageBlock sb) {
        return rebuilt(op, autoUnrollMaxStep, storageAlign, sb, tensorized);
    }

    /** The same loops over a rebuilt operation (a reader of a cached tensor). */
    Stage withOp(Operation newOp) {
        return rebuilt(newOp, autoUnrollMaxStep, storageAlign, storageBlock, tensorized);
    }

    Stage withTensorized(Tensorized t) {
        return rebuilt(op, autoUnrollMaxStep, storageAlign, storageBlock, t);
    }

    /** The same loops and placement with another operation or other attributes. */
    private Stage rebuilt(Operation newOp, int unrollSteps, StorageAlign sa, StorageBlock sb, Tensorized t) {
        return new Stage(
                newOp,
                output,
                numRoots,
                all,
                leaves,
                relations,
                computeAt,
                attachStage,
                attachIter,
                unrollSteps,
                sa,
                sb,
                scope,
                t);
    }

    @Override
    public String toString() {
        return name() + " " + iters();
    }
}
