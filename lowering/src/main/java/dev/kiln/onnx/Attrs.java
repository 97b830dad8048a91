package dev.kiln.onnx;

import dev.kiln.ir.KilnException;
import dev.kiln.onnx.proto.Onnx.AttributeProto;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** A node's attributes, read by name with their ONNX defaults; an attribute nobody reads is an error. */
final class Attrs {
    private final Map<String, AttributeProto> byName = new HashMap<>();

    Attrs(NodeProto node, Set<String> known) {
        for (AttributeProto a : node.getAttributeList()) {
            if (!a.getRefAttrName().isEmpty()) {
                throw new KilnException(
                        "attribute '" + a.getName() + "' refers to a function attribute, which Kiln does not support");
            }
            if (!known.contains(a.getName())) {
                throw new KilnException("attribute '" + a.getName() + "' is not supported (Kiln reads "
                        + (known.isEmpty() ? "none" : known) + ")");
            }
            byName.put(a.getName(), a);
        }
    }

    boolean has(String name) {
        return byName.containsKey(name);
    }

    long getInt(String name, long dflt) {
        AttributeProto a = byName.get(name);
        return a == null ? dflt : check(a, AttributeProto.AttributeType.INT).getI();
    }

    double getFloat(String name, double dflt) {
        AttributeProto a = byName.get(name);
        return a == null ? dflt : check(a, AttributeProto.AttributeType.FLOAT).getF();
    }

    String getString(String name, String dflt) {
        AttributeProto a = byName.get(name);
        return a == null
                ? dflt
                : check(a, AttributeProto.AttributeType.STRING).getS().toStringUtf8();
    }

    /** The ints of {@code name}, or null when absent. */
    long[] getInts(String name) {
        AttributeProto a = byName.get(name);
        return a == null
                ? null
                : check(a, AttributeProto.AttributeType.INTS).getIntsList().stream()
                        .mapToLong(Long::longValue)
                        .toArray();
    }

    List<Float> getFloats(String name) {
        AttributeProto a = byName.get(name);
        return a == null ? null : check(a, AttributeProto.AttributeType.FLOATS).getFloatsList();
    }

    /** A tensor-valued attribute as a constant, or null. */
    Const getTensor(String name) {
        AttributeProto a = byName.get(name);
        return a == null
                ? null
                : Const.of(check(a, AttributeProto.AttributeType.TENSOR).getT());
    }

    private static AttributeProto check(AttributeProto a, AttributeProto.AttributeType want) {
        if (a.getType() != want && a.getType() != AttributeProto.AttributeType.UNDEFINED) {
            throw new KilnException("attribute '" + a.getName() + "' must be " + want + ", got " + a.getType());
        }
        return a;
    }
}
