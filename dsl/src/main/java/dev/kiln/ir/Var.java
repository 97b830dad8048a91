package dev.kiln.ir;

import java.util.Objects;

/**
 * A variable: a loop index, a let-bound value, a combiner argument. Variables compare by
 * identity: two variables named {@code i} are different variables. Names are for printing.
 */
public sealed class Var implements Expr permits IterVar {
    private final String name;
    private final DType dtype;

    public Var(String name, DType dtype) {
        this.name = Objects.requireNonNull(name, "name");
        this.dtype = Objects.requireNonNull(dtype, "dtype");
        if (name.isEmpty()) throw new KilnException("a variable needs a non-empty name");
    }

    /** An int32 index variable. */
    public Var(String name) {
        this(name, DType.INT32);
    }

    public String name() {
        return name;
    }

    @Override
    public DType dtype() {
        return dtype;
    }

    /** A fresh variable with the same name and type. */
    public Var copy() {
        return new Var(name, dtype);
    }

    @Override
    public final boolean equals(Object o) {
        return this == o;
    }

    @Override
    public final int hashCode() {
        return System.identityHashCode(this);
    }

    @Override
    public String toString() {
        return name;
    }
}
