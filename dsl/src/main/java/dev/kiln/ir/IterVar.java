package dev.kiln.ir;

import java.util.Objects;

/**
 * An axis of a computation: a variable with a domain and a kind. The spatial axes of a
 * {@code compute} are {@link Kind#SPATIAL}; the axes made by {@code reduceAxis} are
 * {@link Kind#REDUCE} and may only be used inside the reduction that names them. An IterVar is a
 * {@link Var}, so it can be used directly in index expressions: {@code A.at(i, k)}.
 */
public final class IterVar extends Var {
    /** Spatial (data-parallel) or reduction axis. */
    public enum Kind {
        SPATIAL,
        REDUCE
    }

    private final Range dom;
    private final Kind kind;

    public IterVar(String name, Range dom, Kind kind) {
        super(name, dom.extent().dtype());
        this.dom = Objects.requireNonNull(dom, "dom");
        this.kind = Objects.requireNonNull(kind, "kind");
        if (dom.extent() instanceof IntImm e && e.value() <= 0) {
            throw new KilnException("axis '" + name + "' has a non-positive extent " + e.value());
        }
    }

    public Range dom() {
        return dom;
    }

    public Kind kind() {
        return kind;
    }

    public boolean isReduce() {
        return kind == Kind.REDUCE;
    }

    /** The constant extent of the domain. */
    public long extent() {
        return dom.constExtent();
    }
}
