package dev.kiln.tir;

import java.util.Objects;

/** Allocates {@code buffer} (its shape must be constant) for the duration of {@code body}. */
public record Allocate(dev.kiln.ir.Buffer buffer, Stmt body) implements Stmt {
    public Allocate {
        Objects.requireNonNull(buffer, "buffer");
        Objects.requireNonNull(body, "body");
    }

    @Override
    public String toString() {
        return StmtPrinter.print(this);
    }
}
