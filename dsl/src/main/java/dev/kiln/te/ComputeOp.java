package dev.kiln.te;

import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.ExprRewriter;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * {@code out[axes] = body}: one or more outputs over the same spatial axes. Either no body is a
 * reduction, or every body is the same multi-value {@link Reduce} with value index 0..k-1 (for
 * example argmax's value and index). A reduction may only be the whole body, and every variable
 * in a body must be one of the op's axes or an axis of that reduction.
 */
public final class ComputeOp implements Operation {
    private final String name;
    private final String tag;
    private final List<IterVar> axes;
    private final List<Expr> bodies;
    private final List<Tensor> outputs;
    private final List<Tensor> inputs;

    ComputeOp(String name, String tag, List<IterVar> axes, List<Expr> bodies) {
        this.name = Objects.requireNonNull(name, "name");
        this.tag = tag == null ? "" : tag;
        this.axes = List.copyOf(axes);
        this.bodies = List.copyOf(bodies);
        if (this.bodies.isEmpty()) throw new KilnException("compute '" + name + "' has no body");
        for (IterVar a : this.axes) {
            if (a.isReduce()) {
                throw new KilnException(
                        "compute '" + name + "': axis '" + a.name() + "' is a reduce axis, not a spatial one");
            }
        }
        validateReductions();
        this.inputs = validateVariablesAndCollectInputs();
        Shape shape = new Shape(this.axes.stream().map(IterVar::extent).toList());
        List<Tensor> outs = new ArrayList<>();
        for (int v = 0; v < this.bodies.size(); v++) {
            String tn = this.bodies.size() == 1 ? name : name + ".v" + v;
            outs.add(new Tensor(this, v, tn, shape, this.bodies.get(v).dtype()));
        }
        this.outputs = List.copyOf(outs);
    }

    /**
     * Builds an operation directly from axes and bodies (schedules use it to make the stages of
     * cache_read, cache_write and rfactor). The same checks apply as for {@link Te#computeMulti}.
     */
    public static ComputeOp create(String name, String tag, List<IterVar> axes, List<Expr> bodies) {
        return new ComputeOp(name, tag, axes, bodies);
    }

    /**
     * The same computation (name, tag, axes) reading {@code replacements.get(t)} wherever it reads a tensor {@code t}
     * that the map holds (compared by identity); this op itself if it reads none of them.
     */
    public ComputeOp readingReplaced(Map<Tensor, Tensor> replacements) {
        if (inputs.stream().noneMatch(replacements::containsKey)) return this;
        ExprRewriter r = new ExprRewriter() {
            @Override
            public Expr visit(Expr e) {
                Expr x = rewriteChildren(e);
                if (x instanceof TensorRead t && replacements.containsKey(t.tensor())) {
                    return new TensorRead(replacements.get(t.tensor()), t.indices());
                }
                return x;
            }
        };
        return new ComputeOp(name, tag, axes, r.visitAll(bodies));
    }

    private void validateReductions() {
        Reduce first = bodies.get(0) instanceof Reduce r ? r : null;
        for (int v = 0; v < bodies.size(); v++) {
            Expr b = bodies.get(v);
            if (b instanceof Reduce r) {
                if (first == null || !r.sameReductionAs(first) || r.valueIndex() != v) {
                    throw new KilnException("compute '" + name + "': output " + v + " is " + ExprPrinter.print(b)
                            + "; the outputs of one compute must be the values 0..k-1 of one reduction, or "
                            + "no reduction");
                }
                for (Expr s : r.sources()) requireNoReduce(s, v);
                requireNoReduce(r.condition(), v);
            } else {
                if (first != null) {
                    throw new KilnException(
                            "compute '" + name + "': output 0 is a reduction but output " + v + " is not");
                }
                requireNoReduce(b, v);
            }
        }
        if (first != null && first.reducer().arity() != bodies.size()) {
            throw new KilnException(
                    "compute '" + name + "': reducer '" + first.reducer().name() + "' gives "
                            + first.reducer().arity() + " values but the compute has " + bodies.size() + " output(s); "
                            + "use computeMulti to take them all");
        }
    }

    private void requireNoReduce(Expr e, int output) {
        Exprs.forEach(e, x -> {
            if (x instanceof Reduce r) {
                throw new KilnException(
                        "compute '" + name + "' output " + output + ": reduction " + ExprPrinter.print(r)
                                + " is nested inside an expression; a reduction must be the whole body. "
                                + "Compute it as its own tensor first");
            }
        });
    }

    private List<Tensor> validateVariablesAndCollectInputs() {
        Set<Var> spatial = Collections.newSetFromMap(new IdentityHashMap<>());
        spatial.addAll(axes);
        Set<Tensor> reads = new LinkedHashSet<>();
        for (Expr b : bodies) {
            Set<Var> bound = Collections.newSetFromMap(new IdentityHashMap<>());
            bound.addAll(spatial);
            if (b instanceof Reduce r) bound.addAll(r.axes());
            Exprs.forEach(b, x -> {
                if (x instanceof TensorRead t) reads.add(Tensor.of(t));
                if (x instanceof Var v && !bound.contains(v)) throw unbound(v);
            });
        }
        return List.copyOf(reads);
    }

    private KilnException unbound(Var v) {
        if (v instanceof IterVar iv && iv.isReduce()) {
            return new KilnException("compute '" + name + "': reduce axis '" + iv.name()
                    + "' is used outside its reduction; use it only inside sum/max/min/prod(" + iv.name() + ", ...)");
        }
        if (v instanceof IterVar iv) {
            return new KilnException("compute '" + name + "': axis '" + iv.name()
                    + "' belongs to another computation; use the index variables this compute's lambda receives");
        }
        return new KilnException("compute '" + name + "': variable '" + v.name() + "' is not bound by this compute");
    }

    @Override
    public String name() {
        return name;
    }

    /** A free-form label ("conv2d_nhwc", "elemwise") that tools may use; not part of the workload key. */
    public String tag() {
        return tag;
    }

    /** The spatial axes, outermost first. */
    public List<IterVar> axes() {
        return axes;
    }

    /**
     * Whether {@code index}, read by this op at position {@code d} of a tensor's indices, is the 0 of an axis of
     * extent 1 of this op at that position: the one element of a unit axis (a broadcasting op reads the batch of 1
     * at 0), which stands for axis {@code d} rather than leaving it out. The sketch rules' read classification and
     * the weight layout derivation both read it so.
     */
    public boolean readsUnitAxisAt(Expr index, int d) {
        return index instanceof IntImm c
                && c.value() == 0
                && d < axes.size()
                && axes.get(d).extent() == 1;
    }

    /** The reduce axes of the body, or an empty list. */
    public List<IterVar> reduceAxes() {
        return bodies.get(0) instanceof Reduce r ? r.axes() : List.of();
    }

    /** One body per output. */
    public List<Expr> bodies() {
        return bodies;
    }

    public Expr body() {
        return bodies.get(0);
    }

    public boolean isReduction() {
        return bodies.get(0) instanceof Reduce;
    }

    @Override
    public List<Tensor> outputs() {
        return outputs;
    }

    @Override
    public List<Tensor> inputTensors() {
        return inputs;
    }

    @Override
    public String toString() {
        return "compute " + name;
    }
}
