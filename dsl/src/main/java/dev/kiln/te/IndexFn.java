package dev.kiln.te;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;

/** Index lambdas of {@code compute}, one interface per arity so that {@code (i, j) -> ...} reads naturally. */
public final class IndexFn {
    private IndexFn() {}

    @FunctionalInterface
    public interface F1 {
        Expr apply(IterVar i);
    }

    @FunctionalInterface
    public interface F2 {
        Expr apply(IterVar i, IterVar j);
    }

    @FunctionalInterface
    public interface F3 {
        Expr apply(IterVar i, IterVar j, IterVar k);
    }

    @FunctionalInterface
    public interface F4 {
        Expr apply(IterVar i, IterVar j, IterVar k, IterVar l);
    }

    @FunctionalInterface
    public interface F5 {
        Expr apply(IterVar i, IterVar j, IterVar k, IterVar l, IterVar m);
    }

    @FunctionalInterface
    public interface F6 {
        Expr apply(IterVar i, IterVar j, IterVar k, IterVar l, IterVar m, IterVar n);
    }
}
