package dev.kiln.arith;

import dev.kiln.ir.Expr;
import java.util.function.BiFunction;

/**
 * One rewrite rule of the simplifier: a name (what a trace reports and tests ask for) and a
 * function that returns the rewritten node, or null when the rule does not apply. A rule must
 * return null rather than an equal node, and never a node that is not equal in value.
 */
record Rule<T extends Expr>(String name, BiFunction<T, Simplifier, Expr> fn) {
    static <T extends Expr> Rule<T> of(String name, BiFunction<T, Simplifier, Expr> fn) {
        return new Rule<>(name, fn);
    }
}
