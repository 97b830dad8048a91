package dev.kiln.nn;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks an operator of the library and says in one line what it computes. docs/OPERATORS.md is
 * generated from these by reflection ({@code ./kiln operators}): one row per operator, with the
 * signatures of all its overloads. On a method of {@code dev.kiln.nn}, exactly one public overload
 * of each operator carries it; on a graph op (a record implementing {@code dev.kiln.graph.Op}), the
 * record does. The Javadoc of the method or record says the details.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface Operator {
    /** What the operator computes, in one line (plain text; backquotes for code). */
    String value();
}
