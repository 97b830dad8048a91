package dev.kiln.graph;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * What the graph needs to know of an {@link Op} besides its attributes and its {@link Op#build build}: its name,
 * how many inputs it takes, its fusion pattern and which inputs are weights. Every record that implements
 * {@code Op} carries one; {@code Op}'s default {@link Op#kind}, {@link Op#arity}, {@link Op#pattern} and
 * {@link Op#weightInputs} return its values (read once per record class), so a record declares them here and
 * nowhere else:
 *
 * <pre>{@code
 * @OpSpec(kind = "dense", arity = 2, pattern = OUT_EWISE_FUSABLE, weightInputs = 1)
 * record Dense() implements Op { public Tensor build(List<Tensor> in) { ... } }
 * }</pre>
 *
 * <p>An op whose name depends on its attributes ({@code Binary}'s "add", {@code ConvNd}'s "conv3d_transpose")
 * leaves {@link #kind} out and overrides {@link Op#kind} instead.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface OpSpec {
    /** The op's name in printouts and messages; "" (the default) when the record overrides {@link Op#kind}. */
    String kind() default "";

    /** How many inputs it takes; -1 for any number of at least one. */
    int arity();

    /** What fusion may do with it. */
    OpPattern pattern();

    /** Input positions that are weights (see {@link Op#weightInputs}); none by default. */
    int[] weightInputs() default {};
}
