package dev.kiln.graph;

import dev.kiln.ir.KilnException;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;

/** Builds an op's tensors on fresh placeholders: shape inference, and the one-node DAG of the reference run. */
final class OpTensors {
    private OpTensors() {}

    /** A placeholder for a graph value (its name made a plain identifier). */
    static Tensor placeholder(Value v) {
        return Te.placeholder(identifier(v.name()), v.dtype(), v.dims());
    }

    /** {@code op} applied to placeholders of {@code inputs}; errors name the node. */
    static Tensor apply(String node, Op op, List<Tensor> inputs) {
        try {
            return op.build(inputs);
        } catch (KilnException e) {
            throw new KilnException("node '" + node + "' (" + op.kind() + "): " + e.getMessage());
        }
    }

    /** The value a node of {@code op} on {@code inputs} produces. */
    static Value infer(String node, Op op, List<Value> inputs) {
        List<Tensor> ts = new ArrayList<>();
        for (Value v : inputs) ts.add(placeholder(v));
        Tensor out = apply(node, op, ts);
        return new Value(node, out.dtype(), out.shape().dims());
    }

    /** {@code name} with every character outside [A-Za-z0-9_] replaced by '_' (never starting with a digit). */
    static String identifier(String name) {
        String s = name.replaceAll("[^A-Za-z0-9_]", "_");
        return s.isEmpty() || Character.isDigit(s.charAt(0)) ? "v_" + s : s;
    }
}
