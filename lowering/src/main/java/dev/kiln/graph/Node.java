package dev.kiln.graph;

import dev.kiln.ir.KilnException;
import java.util.List;
import java.util.Objects;

/**
 * One operator call of a {@link Graph}: its op (with attributes), the names of the values it reads
 * (graph inputs, constants or outputs of earlier nodes), and the value it produces, whose name is
 * the node's name.
 */
public record Node(Op op, List<String> inputs, Value output) {
    public Node {
        Objects.requireNonNull(op, "op");
        Objects.requireNonNull(output, "output");
        inputs = List.copyOf(inputs);
        if (op.arity() >= 0 ? inputs.size() != op.arity() : inputs.isEmpty()) {
            throw new KilnException("node '" + output.name() + "' (" + op.kind() + ") takes "
                    + (op.arity() >= 0 ? String.valueOf(op.arity()) : "at least one") + " input(s), got "
                    + inputs.size()
                    + ": " + inputs);
        }
    }

    /** The node's name: the name of the value it produces. */
    public String name() {
        return output.name();
    }

    @Override
    public String toString() {
        String a = op.attrs();
        return output + " = " + op.kind() + "(" + String.join(", ", inputs) + ")"
                + (a.isBlank() ? "" : "  " + a.strip());
    }
}
