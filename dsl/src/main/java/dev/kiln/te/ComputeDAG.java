package dev.kiln.te;

import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The computation as a graph: every operation reachable from the outputs, in topological order
 * (producers before consumers; inputs in order of first use), with its FLOP count and a
 * structural workload key.
 */
public final class ComputeDAG {
    private final List<Tensor> outputs;
    private final List<Operation> ops;
    private final long flops;
    private final boolean floatArithmetic;
    private final String workloadKey;

    public ComputeDAG(List<Tensor> outputs) {
        if (outputs == null) throw new KilnException("ComputeDAG: the list of outputs is null");
        if (outputs.isEmpty()) throw new KilnException("a ComputeDAG needs at least one output tensor");
        Set<Tensor> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (int o = 0; o < outputs.size(); o++) {
            Tensor t = outputs.get(o);
            if (t == null) throw new KilnException("ComputeDAG: output " + o + " of " + outputs.size() + " is null");
            if (t.isPlaceholder()) {
                throw new KilnException("ComputeDAG: output " + o + " '" + t.name()
                        + "' is a placeholder (an input); the outputs must be computed tensors");
            }
            if (!seen.add(t)) throw new KilnException("ComputeDAG: output '" + t.name() + "' is listed twice");
        }
        this.outputs = List.copyOf(outputs);
        this.ops = topoOrder(this.outputs);
        this.flops = FlopCounter.count(ops);
        this.floatArithmetic = FlopCounter.hasFloatArithmetic(ops);
        this.workloadKey = WorkloadKey.of(this);
    }

    public static ComputeDAG of(Tensor... outputs) {
        if (outputs == null) throw new KilnException("ComputeDAG: the array of outputs is null");
        return new ComputeDAG(java.util.Arrays.asList(outputs));
    }

    private static List<Operation> topoOrder(List<Tensor> outputs) {
        List<Operation> order = new ArrayList<>();
        Set<Operation> done = Collections.newSetFromMap(new IdentityHashMap<>());
        Set<Operation> onStack = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Tensor t : outputs) visit(t.op(), done, onStack, order);
        return List.copyOf(order);
    }

    private static void visit(Operation op, Set<Operation> done, Set<Operation> onStack, List<Operation> order) {
        if (done.contains(op)) return;
        if (!onStack.add(op)) throw new KilnException("cycle in the computation at '" + op.name() + "'");
        for (Tensor in : op.inputTensors()) visit(in.op(), done, onStack, order);
        onStack.remove(op);
        done.add(op);
        order.add(op);
    }

    /** The output tensors, as given. */
    public List<Tensor> outputs() {
        return outputs;
    }

    /** All operations, producers first. */
    public List<Operation> ops() {
        return ops;
    }

    /** The placeholders (inputs), in topological order. */
    public List<Tensor> inputs() {
        return ops.stream()
                .filter(o -> o instanceof PlaceholderOp)
                .map(o -> o.output(0))
                .toList();
    }

    /** Compute operations whose outputs are neither outputs of the DAG nor placeholders. */
    public List<ComputeOp> intermediates() {
        Set<Operation> outOps = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Tensor t : outputs) outOps.add(t.op());
        return ops.stream()
                .filter(o -> o instanceof ComputeOp && !outOps.contains(o))
                .map(o -> (ComputeOp) o)
                .toList();
    }

    /** The tensors a compiled function takes, in order: the inputs, then the outputs. */
    public List<Tensor> arguments() {
        Set<Tensor> args = new LinkedHashSet<>(inputs());
        args.addAll(outputs);
        return List.copyOf(args);
    }

    /**
     * Operations of one evaluation, counted by {@link FlopCounter}'s rules (a multiply-add counts
     * 2; a reducer's comparisons count, so argmax is not 0). Floating-point operations, or integer
     * ones for an integer computation ({@link #hasFloatArithmetic()}).
     */
    public long flopCount() {
        return flops;
    }

    /**
     * Whether the counted operations include floating-point arithmetic; when not (integer
     * kernels such as an int8 matmul), {@link #flopCount()} counts integer operations and rates
     * are GOP/s, not GFLOP/s.
     */
    public boolean hasFloatArithmetic() {
        return floatArithmetic;
    }

    /** The unit of this computation's rate: {@code "GFLOP/s"}, or {@code "GOP/s"} for integer arithmetic. */
    public String rateUnit() {
        return rateUnit(floatArithmetic);
    }

    /** {@code "GFLOP/s"} for floating-point arithmetic, {@code "GOP/s"} for integer arithmetic. */
    public static String rateUnit(boolean floatArithmetic) {
        return floatArithmetic ? "GFLOP/s" : "GOP/s";
    }

    /**
     * A key that depends only on the structure of the computation: the same computation built
     * twice gives the same key, whatever the tensors and axes are named; a different shape, dtype
     * or expression gives another.
     */
    public String workloadKey() {
        return workloadKey;
    }

    /** A readable printout: one line per operation. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (Operation op : ops) {
            switch (op) {
                case PlaceholderOp p -> {
                    Tensor t = p.output(0);
                    sb.append(t.name())
                            .append(" = placeholder(")
                            .append(t.dtype())
                            .append(", ")
                            .append(t.shape())
                            .append(")\n");
                }
                case ComputeOp c -> {
                    String idx = c.axes().stream().map(IterVar::name).collect(Collectors.joining(", "));
                    for (int v = 0; v < c.bodies().size(); v++) {
                        Tensor t = c.output(v);
                        sb.append(t.name())
                                .append('[')
                                .append(idx)
                                .append("] = ")
                                .append(ExprPrinter.print(c.bodies().get(v)))
                                .append("    # ")
                                .append(t.dtype())
                                .append(' ')
                                .append(t.shape());
                        for (IterVar r : c.reduceAxes()) {
                            sb.append(", ").append(r.name()).append(" in ").append(r.dom());
                        }
                        sb.append('\n');
                    }
                }
            }
        }
        return sb.toString();
    }
}
