package dev.kiln.te;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Reducer;
import dev.kiln.ir.TensorRead;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The same computation with every float32 sum accumulated in float64: what a reference should
 * compute. A float32 sum taken one term after another, as the default loop nest does, drifts once
 * the running total dwarfs the terms: the norm of a 4096 x 1024 matrix (4M squares) comes out
 * 0.15% low, more than the 1e-3 that tuning checks programs with, so every program that adds in
 * another order (an rfactor, a vectorised or a parallel reduction: the fast ones, and the more
 * accurate ones) used to be rejected as wrong. A float64 total is exact to float32's precision for
 * any reduction up to about 2^29 terms.
 *
 * <p>Each compute whose body is a single-value float32 {@code sum} becomes two: {@code
 * <name>_f64}, the same reduction of the terms cast to float64 (the terms themselves are still
 * float32 products, as in the program under test), and {@code <name>}, that total cast back to
 * float32 (same name, tag, shape and dtype as before). Every other operation is kept, reading the
 * new tensors; the DAG's arguments (inputs, then outputs) keep their names, shapes and order, so a
 * program of the original DAG is checked against this one argument by argument. Other reducers
 * (max, min, prod, argmax, integer sums) are exact or have nothing to gain and are kept.
 */
public final class WideAccumulation {
    private WideAccumulation() {}

    /** {@code dag} with its float32 sums accumulated in float64; {@code dag} itself if it has none. */
    public static ComputeDAG of(ComputeDAG dag) {
        Map<Tensor, Tensor> repl = new IdentityHashMap<>();
        for (Operation op : dag.ops()) {
            if (!(op instanceof ComputeOp c)) continue;
            boolean wide = widens(c);
            if (!wide && c.inputTensors().stream().noneMatch(repl::containsKey)) continue;
            ComputeOp rebuilt = c.readingReplaced(repl);
            if (!wide) {
                for (int v = 0; v < c.outputs().size(); v++) repl.put(c.output(v), rebuilt.output(v));
                continue;
            }
            Reduce r = (Reduce) rebuilt.body();
            Reduce total = new Reduce(
                    Reducer.sum(DType.FLOAT64),
                    List.of(r.sources().get(0).cast(DType.FLOAT64)),
                    r.axes(),
                    r.condition(),
                    0);
            ComputeOp sum64 = ComputeOp.create(c.name() + "_f64", c.tag(), c.axes(), List.of(total));
            List<IterVar> axes = new ArrayList<>();
            for (IterVar a : c.axes()) axes.add(new IterVar(a.name(), a.dom(), IterVar.Kind.SPATIAL));
            Expr narrowed = new TensorRead(sum64.output(0), List.<Expr>copyOf(axes)).cast(r.dtype());
            repl.put(
                    c.output(0),
                    ComputeOp.create(c.name(), c.tag(), axes, List.of(narrowed)).output(0));
        }
        if (repl.isEmpty()) return dag;
        return new ComputeDAG(
                dag.outputs().stream().map(t -> repl.getOrDefault(t, t)).toList());
    }

    /** Whether {@code c} is a float32 sum this class widens. */
    static boolean widens(ComputeOp c) {
        return c.bodies().size() == 1
                && c.body() instanceof Reduce r
                && r.dtype() == DType.FLOAT32
                && r.reducer().arity() == 1
                && isAddition(r.reducer());
    }

    /** {@code lhs + rhs} from 0, whatever the reducer is called. */
    private static boolean isAddition(Reducer red) {
        return red.results().get(0) instanceof Binary b
                && b.op() == BinaryOp.ADD
                && ((b.a() == red.lhs().get(0) && b.b() == red.rhs().get(0))
                        || (b.a() == red.rhs().get(0) && b.b() == red.lhs().get(0)))
                && red.identities().get(0) instanceof FloatImm z
                && z.value() == 0;
    }
}
