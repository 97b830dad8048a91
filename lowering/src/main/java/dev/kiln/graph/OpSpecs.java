package dev.kiln.graph;

import dev.kiln.ir.KilnException;
import java.util.Arrays;
import java.util.List;

/**
 * The {@link OpSpec} of each op record, read by reflection once per class, behind {@link Op}'s default methods.
 */
final class OpSpecs {
    private OpSpecs() {}

    /** An {@link OpSpec}'s values; {@code kind} is "" when the record overrides {@link Op#kind}. */
    record Spec(String record, String kind, int arity, OpPattern pattern, List<Integer> weightInputs) {
        /** The annotated kind; an error naming the record when it has none (then it must override kind()). */
        String requireKind() {
            if (kind.isEmpty()) {
                throw new KilnException(
                        "graph op " + record + ": its @OpSpec names no kind, so it must override kind()");
            }
            return kind;
        }
    }

    private static final ClassValue<Spec> SPECS = new ClassValue<>() {
        @Override
        protected Spec computeValue(Class<?> c) {
            OpSpec s = c.getAnnotation(OpSpec.class);
            if (s == null) throw new KilnException("graph op " + c.getSimpleName() + " carries no @OpSpec");
            List<Integer> weights = Arrays.stream(s.weightInputs()).boxed().toList();
            return new Spec(c.getSimpleName(), s.kind(), s.arity(), s.pattern(), weights);
        }
    };

    /** The spec of the op record {@code c}; an error naming it when it carries none. */
    static Spec of(Class<?> c) {
        return SPECS.get(c);
    }
}
