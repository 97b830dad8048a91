package dev.kiln.lower;

import dev.kiln.arith.Simplifier;
import dev.kiln.tir.PrimFunc;

/**
 * The simplification pass: simplifies every expression of a function with the ranges of its
 * loops, folds constant conditions, removes loops of extent 0, unwraps loops of extent 1, and
 * flattens sequences (see {@link Simplifier}). A function that has nothing to simplify comes
 * back as the same object.
 */
public final class Simplify {
    private Simplify() {}

    public static PrimFunc apply(PrimFunc f) {
        return f.withBody(new Simplifier().simplify(f.body()));
    }
}
