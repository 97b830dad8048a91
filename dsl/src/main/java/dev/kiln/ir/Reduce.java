package dev.kiln.ir;

import java.util.List;

/**
 * A reduction over {@code axes} of {@code sources}, keeping only the points where
 * {@code condition} holds; the value is output {@code valueIndex} of the reducer. A Reduce may
 * only appear as the whole body of a {@code compute}.
 */
public record Reduce(Reducer reducer, List<Expr> sources, List<IterVar> axes, Expr condition, int valueIndex)
        implements Expr {
    public Reduce {
        sources = List.copyOf(sources);
        axes = List.copyOf(axes);
        if (sources.size() != reducer.arity()) {
            throw new KilnException("reducer '" + reducer.name() + "' combines " + reducer.arity()
                    + " value(s) but got " + sources.size() + " source(s)");
        }
        for (int v = 0; v < sources.size(); v++) {
            if (sources.get(v).dtype() != reducer.dtype(v)) {
                throw new KilnException("reducer '" + reducer.name() + "' value " + v + " is " + reducer.dtype(v)
                        + " but its source " + ExprPrinter.print(sources.get(v)) + " is "
                        + sources.get(v).dtype()
                        + "; add a cast()");
            }
        }
        if (axes.isEmpty()) throw new KilnException("reduction '" + reducer.name() + "' needs at least one axis");
        for (IterVar a : axes) {
            if (!a.isReduce()) {
                throw new KilnException("axis '" + a.name() + "' is a spatial axis and cannot be reduced over; "
                        + "make it with reduceAxis()");
            }
        }
        if (axes.stream().distinct().count() != axes.size()) {
            throw new KilnException("reduction '" + reducer.name() + "' lists an axis twice: " + axes);
        }
        if (!condition.dtype().isBool()) {
            throw new KilnException(
                    "reduction condition " + ExprPrinter.print(condition) + " is " + condition.dtype() + ", not bool");
        }
        if (valueIndex < 0 || valueIndex >= reducer.arity()) {
            throw new KilnException("value index " + valueIndex + " out of range for reducer '" + reducer.name() + "'");
        }
    }

    @Override
    public DType dtype() {
        return reducer.dtype(valueIndex);
    }

    /** Whether two reductions differ only in their value index (the outputs of one multi-value reduction). */
    public boolean sameReductionAs(Reduce other) {
        return reducer == other.reducer
                && sources.equals(other.sources)
                && axes.equals(other.axes)
                && condition.equals(other.condition);
    }

    @Override
    public String toString() {
        return ExprPrinter.print(this);
    }
}
