package dev.kiln.autoschedule.analysis;

import dev.kiln.ir.Expr;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Ansor's access analysis over a set of operations (a DAG, or the current operations of a loop
 * state after cache_write or rfactor rewrote some): who reads whom and how, and the predicates
 * the sketch rules ask about one operation or a producer/consumer pair. Immutable.
 */
public final class AccessAnalyzer {
    private final List<Operation> ops;
    private final Map<Operation, OpAccess> access = new IdentityHashMap<>();
    private final Map<Operation, Map<Operation, List<List<Expr>>>> readBy = new IdentityHashMap<>();
    private final Set<Operation> outputs = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Map<Operation, Map<Operation, Integer>> commonOuter = new IdentityHashMap<>();

    private AccessAnalyzer(List<Operation> ops, Set<Operation> declaredOutputs) {
        this.ops = List.copyOf(ops);
        for (Operation op : this.ops) {
            access.put(op, OpAccess.of(op));
            readBy.put(op, new LinkedHashMap<>());
            commonOuter.put(op, new IdentityHashMap<>());
        }
        for (Operation op : this.ops) {
            access.get(op).reads().forEach((producer, idx) -> {
                Map<Operation, List<List<Expr>>> by = readBy.get(producer);
                if (by == null) {
                    throw new KilnException("operation '" + op.name() + "' reads '" + producer.name()
                            + "', which is not among the analysed operations");
                }
                by.put(op, idx);
            });
        }
        for (Operation op : this.ops) {
            if (declaredOutputs.contains(op) || readBy.get(op).isEmpty()) outputs.add(op);
        }
        for (Operation op : this.ops) {
            if (!(op instanceof ComputeOp c)) continue;
            access.get(op).reads().forEach((producer, idx) -> {
                int n = commonOuterIterators(c, producer, idx);
                commonOuter.get(op).put(producer, n);
                commonOuter.get(producer).put(op, n);
            });
        }
    }

    /** The analysis of a DAG's operations. */
    public static AccessAnalyzer of(ComputeDAG dag) {
        Set<Operation> outs = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Tensor t : dag.outputs()) outs.add(t.op());
        return new AccessAnalyzer(dag.ops(), outs);
    }

    /** The analysis of the operations a loop state currently computes (one per stage). */
    public static AccessAnalyzer of(LoopState state) {
        List<Operation> ops = new ArrayList<>();
        Set<Operation> outs = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Stage st : state.stages()) {
            ops.add(st.op());
            if (st.output()) outs.add(st.op());
        }
        return new AccessAnalyzer(ops, outs);
    }

    /** The analysed operations, producers first. */
    public List<Operation> ops() {
        return ops;
    }

    /** The per-operation analysis. */
    public OpAccess access(Operation op) {
        OpAccess a = access.get(op);
        if (a == null) throw new KilnException("operation '" + op.name() + "' is not among the analysed operations");
        return a;
    }

    public boolean isSimpleAccess(Operation op) {
        return access(op).simpleAccess();
    }

    public boolean isStrictlyInlineable(Operation op) {
        return access(op).strictlyInlineable();
    }

    public boolean needsMultiLevelTiling(Operation op) {
        return access(op).needsMultiLevelTiling();
    }

    /** Whether nothing reads the operation's outputs, or it is an output of the computation. */
    public boolean isOutput(Operation op) {
        access(op);
        return outputs.contains(op);
    }

    /** The operations that read {@code op} directly, each with the index lists of its reads. */
    public Map<Operation, List<List<Expr>>> readBy(Operation op) {
        access(op);
        return Collections.unmodifiableMap(readBy.get(op));
    }

    /** The operations {@code op} reads directly, each with the index lists of the reads. */
    public Map<Operation, List<List<Expr>>> readFrom(Operation op) {
        return access(op).reads();
    }

    /**
     * The number of leading output dimensions {@code op} and its direct producer or consumer
     * {@code other} share: equal extents and every access at that position is the reader's axis
     * of that position plus a constant. 0 when they are not adjacent.
     */
    public int numCommonOuterIterators(Operation op, Operation other) {
        access(op);
        return commonOuter.get(op).getOrDefault(other, 0);
    }

    /**
     * The fewest common outer iterators along any chain of readers from {@code op} to
     * {@code target} (starting from op's rank); 0 when {@code target} does not (transitively)
     * read {@code op}.
     */
    public int numCommonOuterIteratorsPath(Operation op, Operation target) {
        int[] best = {Integer.MAX_VALUE};
        boolean[] met = {false};
        walk(op, target, rank(op), best, met);
        return met[0] ? best[0] : 0;
    }

    private void walk(Operation cur, Operation target, int num, int[] best, boolean[] met) {
        if (cur == target) {
            best[0] = Math.min(best[0], num);
            met[0] = true;
            return;
        }
        for (Operation next : readBy.get(cur).keySet()) {
            walk(next, target, Math.min(num, commonOuter.get(cur).getOrDefault(next, 0)), best, met);
        }
    }

    /**
     * Whether {@code target} consumes {@code op} element-wise through a chain where every
     * operation has exactly one reader, all are computes with the same output shape, and each
     * reads the previous one with every axis once, in order (a constant shift allowed).
     */
    public boolean elementwiseMatch(Operation op, Operation target) {
        access(target);
        Operation cur = op;
        while (cur != target) {
            Map<Operation, List<List<Expr>>> by = readBy(cur);
            if (by.size() != 1) return false;
            Operation next = by.keySet().iterator().next();
            if (!(cur instanceof ComputeOp) || !(next instanceof ComputeOp)) return false;
            List<Long> shape = cur.output(0).shape().dims();
            for (Tensor t : cur.outputs()) if (!t.shape().dims().equals(shape)) return false;
            for (Tensor t : next.outputs()) if (!t.shape().dims().equals(shape)) return false;
            for (List<Expr> idx : by.get(next)) if (!IndexAccess.of(next, idx).isElementwise()) return false;
            cur = next;
        }
        return true;
    }

    private static int rank(Operation op) {
        return op.output(0).shape().rank();
    }

    private static int commonOuterIterators(ComputeOp op, Operation producer, List<List<Expr>> reads) {
        List<Long> out = op.output(0).shape().dims();
        List<Long> in = producer.output(0).shape().dims();
        int n = 0;
        for (; n < Math.min(out.size(), in.size()); n++) {
            if (!Objects.equals(out.get(n), in.get(n))) break;
            boolean same = true;
            for (List<Expr> idx : reads) {
                if (n >= idx.size()
                        || IndexAccess.shiftedVar(idx.get(n)) != op.axes().get(n)) {
                    same = false;
                    break;
                }
            }
            if (!same) break;
        }
        return n;
    }
}
