package dev.kiln.tir;

/**
 * A statement of the loop IR. Nodes are immutable records; dispatch over them with an
 * exhaustive {@code switch} so that a new node is a compile error wherever it is not handled.
 */
public sealed interface Stmt permits For, Store, Allocate, Seq, IfThenElse, Let, Evaluate, Pragma, Barrier {
    @Override
    String toString();
}
