package dev.kiln.onnx;

import dev.kiln.ir.DType;
import dev.kiln.onnx.proto.Onnx.AttributeProto;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The QDQ form of a quantised model turned into integer operators before import, as ONNX Runtime's QDQ transformer
 * does. A statically quantised model in QDQ form (what ONNX Runtime's {@code quantize_static} writes by default, and
 * PyTorch's and TensorRT's exporters) keeps every operator in float and marks the quantisation with a
 * DequantizeLinear before each input and a QuantizeLinear after the output: read as written, each convolution
 * would run in float32 between a round trip through 8 bits. This pass finds the node units
 *
 * <pre>
 *   DequantizeLinear(x_q) --+
 *   DequantizeLinear(W_q) --+-- Conv --[Relu]-- QuantizeLinear --> y_q
 *   DequantizeLinear(B_q) --+  (optional)
 *
 *   DequantizeLinear(a_q) --+-- MatMul --[Relu]-- QuantizeLinear --> y_q
 *   DequantizeLinear(B_q) --+
 * </pre>
 *
 * <p>and replaces each with the QLinearConv or QLinearMatMul that computes it in integers: x an 8-bit graph value
 * with one scale and zero point, the weight an 8-bit initializer (per tensor or per output channel), the conv's
 * bias an int32 initializer whose scale is x's times the weight's (the quantiser's rule; another scale leaves the
 * unit in float), the float result used by the QuantizeLinear alone; a Relu between them goes when the output's
 * zero point is its type's minimum (then it changes nothing). A unit is fused only where its integer operator
 * takes the dot-product path ({@link QuantOps#packable}, {@link QuantMatmulOps#packable}); anything else (a
 * depthwise or grouped conv, a computed B, a weight with zero points) stays float, which computes the same values
 * up to float rounding. A MaxPool between a DequantizeLinear and a QuantizeLinear of the same scale and zero point
 * becomes the max pool of the 8-bit values (the same values, as ONNX Runtime's NhwcMaxPool). DequantizeLinear nodes
 * left with no consumer are dropped. The float ops between the units (Add, average pools, reshapes) stay as they
 * are: their DequantizeLinear and QuantizeLinear fuse into them.
 */
final class QdqFusion {
    private QdqFusion() {}

    /** The scale of an int32 bias may differ from x_scale * w_scale by this relative amount (float32 rounding). */
    static final double BIAS_SCALE_RTOL = 1e-5;

    /**
     * The nodes with every fusable unit replaced, in an order still topological; {@code constants} gives an
     * initializer's value by name (null for anything else), {@code graphOutputs} the names the graph returns.
     */
    static List<NodeProto> fuse(List<NodeProto> nodes, Function<String, Const> constants, Set<String> graphOutputs) {
        Map<String, NodeProto> producer = new HashMap<>();
        Map<String, List<NodeProto>> consumers = new HashMap<>();
        for (NodeProto n : nodes) {
            for (String o : n.getOutputList()) producer.put(o, n);
            for (String i : n.getInputList())
                if (!i.isEmpty())
                    consumers.computeIfAbsent(i, k -> new ArrayList<>()).add(n);
        }
        Unit u = new Unit(producer, consumers, constants, graphOutputs);
        Map<NodeProto, NodeProto> replaced = new HashMap<>(); // the QuantizeLinear -> its fused node
        Set<NodeProto> removed = new HashSet<>();
        for (NodeProto q : nodes) {
            if (!q.getOpType().equals("QuantizeLinear") || !q.getDomain().isEmpty()) continue;
            NodeProto fused = u.match(q, removed);
            if (fused != null) replaced.put(q, fused);
        }
        List<NodeProto> out = nodes;
        if (!replaced.isEmpty()) {
            out = new ArrayList<>();
            for (NodeProto n : nodes) {
                if (replaced.containsKey(n)) out.add(replaced.get(n));
                else if (!removed.contains(n)) out.add(n);
            }
            out = dropDeadDequantize(out, graphOutputs);
        }
        return asUint8(out, constants, graphOutputs);
    }

    /** Where each integer operator of the family keeps its zero point: the tensor it writes, each one it reads. */
    private static int outputZero(NodeProto n) {
        return switch (n.getOpType()) {
            case "QuantizeLinear" -> 2;
            case "QLinearConv", "QLinearMatMul" -> 7;
            default -> -1;
        };
    }

    private static boolean readsAsActivation(NodeProto n, String t) {
        boolean op = isDequantize(n)
                || n.getOpType().equals("QLinearConv")
                || n.getOpType().equals("QLinearMatMul");
        return op
                && n.getDomain().isEmpty()
                && n.getInput(0).equals(t)
                && n.getInputList().lastIndexOf(t) == 0;
    }

    /**
     * Internal int8 activations kept as uint8: a tensor {@code q} the graph does not return, written by a
     * QuantizeLinear, QLinearConv or QLinearMatMul and read only as the activation of DequantizeLinear, QLinearConv
     * or QLinearMatMul (each with a scalar int8 zero point), or by max pools whose outputs are read so, is written
     * as {@code q + 128} with every zero point 128 higher, uint8. The values each reader computes are the same
     * ({@code q - z = (q + 128) - (z + 128)}, the saturation at [-128, 127] the same as at [0, 255]), but the
     * dot-product instructions take the unsigned operand as it is, with no shift of each int8 activation before each
     * convolution. The new zero points are Constant nodes put first.
     */
    private static List<NodeProto> asUint8(
            List<NodeProto> nodes, Function<String, Const> constants, Set<String> graphOutputs) {
        Map<String, List<NodeProto>> readers = new HashMap<>();
        for (NodeProto n : nodes)
            for (String i : new HashSet<>(n.getInputList()))
                if (!i.isEmpty())
                    readers.computeIfAbsent(i, k -> new ArrayList<>()).add(n);
        Map<NodeProto, NodeProto.Builder> edits = new HashMap<>();
        Map<String, NodeProto> zeros = new java.util.LinkedHashMap<>(); // int8 zero point name -> its uint8 Constant
        for (NodeProto p : nodes) {
            int zi = outputZero(p);
            if (zi < 0 || !p.getDomain().isEmpty() || p.getOutputCount() != 1) continue;
            String t = p.getOutput(0);
            List<NodeProto> rs = readers.getOrDefault(t, List.of());
            if (graphOutputs.contains(t) || rs.isEmpty() || !int8Scalar(p, zi, constants)) continue;
            if (p.getOpType().equals("QuantizeLinear") && hasAttr(p, "output_dtype")) continue;
            if (!retypable(t, readers, graphOutputs, constants)) continue;
            rezero(edits, zeros, p, zi, constants);
            retype(t, readers, edits, zeros, constants);
        }
        if (edits.isEmpty()) return nodes;
        List<NodeProto> out = new ArrayList<>(zeros.values());
        for (NodeProto n : nodes) out.add(edits.containsKey(n) ? edits.get(n).build() : n);
        return out;
    }

    /** A max pool of {@code t}: it passes 8-bit values through, so its output is retyped with its input. */
    private static boolean passesThrough(NodeProto n, String t) {
        return n.getOpType().equals("MaxPool")
                && n.getDomain().isEmpty()
                && n.getInputCount() == 1
                && n.getInput(0).equals(t)
                && n.getOutputCount() == 1;
    }

    /**
     * Whether every reader of {@code t} takes it as an activation with an int8 scalar zero point, or is a max pool
     * whose output is retypable the same way; the graph must not return {@code t}.
     */
    private static boolean retypable(
            String t,
            Map<String, List<NodeProto>> readers,
            Set<String> graphOutputs,
            Function<String, Const> constants) {
        List<NodeProto> rs = readers.getOrDefault(t, List.of());
        if (graphOutputs.contains(t) || rs.isEmpty()) return false;
        for (NodeProto r : rs) {
            boolean ok = passesThrough(r, t)
                    ? retypable(r.getOutput(0), readers, graphOutputs, constants)
                    : readsAsActivation(r, t) && int8Scalar(r, 2, constants);
            if (!ok) return false;
        }
        return true;
    }

    /** Moves the zero point of every reader of {@code t} (through max pools) to its uint8 form. */
    private static void retype(
            String t,
            Map<String, List<NodeProto>> readers,
            Map<NodeProto, NodeProto.Builder> edits,
            Map<String, NodeProto> zeros,
            Function<String, Const> constants) {
        for (NodeProto r : readers.get(t)) {
            if (passesThrough(r, t)) retype(r.getOutput(0), readers, edits, zeros, constants);
            else rezero(edits, zeros, r, 2, constants);
        }
    }

    private static boolean int8Scalar(NodeProto n, int i, Function<String, Const> constants) {
        if (i >= n.getInputCount() || n.getInput(i).isEmpty()) return false;
        Const c = constants.apply(n.getInput(i));
        return c != null && c.dtype() == DType.INT8 && c.size() == 1;
    }

    /** Points input {@code i} of {@code n} (an int8 scalar zero point) at its uint8 form, zero + 128. */
    private static void rezero(
            Map<NodeProto, NodeProto.Builder> edits,
            Map<String, NodeProto> zeros,
            NodeProto n,
            int i,
            Function<String, Const> constants) {
        String z = n.getInput(i);
        NodeProto k = zeros.computeIfAbsent(z, name -> {
            Const c = constants.apply(name);
            var t = dev.kiln.onnx.proto.Onnx.TensorProto.newBuilder()
                    .setName(name + "/uint8")
                    .setDataType(dev.kiln.onnx.proto.Onnx.TensorProto.DataType.UINT8_VALUE)
                    .addInt32Data((int) c.getLong(0) + 128);
            for (long d : c.shape()) t.addDims(d);
            return NodeProto.newBuilder()
                    .setOpType("Constant")
                    .setName(name + "/uint8")
                    .addOutput(name + "/uint8")
                    .addAttribute(AttributeProto.newBuilder()
                            .setName("value")
                            .setType(AttributeProto.AttributeType.TENSOR)
                            .setT(t))
                    .build();
        });
        edits.computeIfAbsent(n, NodeProto::toBuilder).setInput(i, k.getOutput(0));
    }

    private static boolean hasAttr(NodeProto n, String name) {
        return n.getAttributeList().stream().anyMatch(a -> a.getName().equals(name));
    }

    /** DequantizeLinear nodes whose output nothing reads any more (a fused unit's weight and bias). */
    private static List<NodeProto> dropDeadDequantize(List<NodeProto> nodes, Set<String> graphOutputs) {
        Set<String> read = new HashSet<>(graphOutputs);
        for (NodeProto n : nodes) read.addAll(n.getInputList());
        List<NodeProto> out = new ArrayList<>();
        for (NodeProto n : nodes)
            if (!n.getOpType().equals("DequantizeLinear") || read.contains(n.getOutput(0))) out.add(n);
        return out;
    }

    /** The matching of one unit, read backwards from its QuantizeLinear. */
    private record Unit(
            Map<String, NodeProto> producer,
            Map<String, List<NodeProto>> consumers,
            Function<String, Const> constants,
            Set<String> graphOutputs) {

        NodeProto match(NodeProto q, Set<NodeProto> removed) {
            Const ys = scalarParam(q, 1), yz = scalarParam(q, 2);
            if (ys == null || yz == null || !ys.isFloat() || !eightBit(yz.dtype()) || attr(q, "block_size") != 0)
                return null;
            NodeProto op = soleProducer(q.getInput(0), q);
            NodeProto relu = null;
            if (op != null && op.getOpType().equals("Relu") && op.getDomain().isEmpty()) {
                long min = yz.dtype() == DType.UINT8 ? 0 : -128;
                if (yz.getLong(0) != min) return null; // a Relu that clamps above the type's minimum: left in float
                relu = op;
                op = soleProducer(relu.getInput(0), relu);
            }
            if (op == null || !op.getDomain().isEmpty()) return null;
            NodeProto fused =
                    switch (op.getOpType()) {
                        case "Conv" -> conv(op, q);
                        case "MaxPool" -> relu == null ? maxPool(op, q, ys, yz) : null;
                        case "MatMul" -> matmul(op, q);
                        default -> null;
                    };
            if (fused == null) return null;
            removed.add(op);
            if (relu != null) removed.add(relu);
            return fused;
        }

        /** Conv with DequantizeLinear on x, W and the optional bias, into QLinearConv. */
        private NodeProto conv(NodeProto conv, NodeProto q) {
            NodeProto dx = activation(conv.getInput(0));
            NodeProto dw = weight(conv.getInput(1));
            if (dx == null || dw == null || conv.getInputCount() > 3) return null;
            Const w = constants.apply(dw.getInput(0)), ws = param(dw, 1), wz = param(dw, 2);
            if (w == null || w.rank() != 4 || ws == null || wz == null || ws.size() != wz.size()) return null;
            long co = w.shape()[0];
            if (ws.size() != 1 && (ws.size() != co || attr(dw, "axis") != 0)) return null;
            long[] dilations = ints(conv, "dilations"), strides = ints(conv, "strides");
            if (!QuantOps.packable(
                    param(dx, 2).dtype(),
                    w.dtype(),
                    wz,
                    attr(conv, "group"),
                    boxed(dilations == null ? new long[] {1, 1} : dilations),
                    boxed(strides == null ? new long[] {1, 1} : strides),
                    co)) return null;
            String bias = null;
            if (conv.getInputCount() == 3 && !conv.getInput(2).isEmpty()) {
                bias = bias(conv.getInput(2), param(dx, 1).get(0), ws, co);
                if (bias == null) return null;
            }
            List<String> in = new ArrayList<>(List.of(
                    dx.getInput(0),
                    dx.getInput(1),
                    dx.getInput(2),
                    dw.getInput(0),
                    dw.getInput(1),
                    dw.getInput(2),
                    q.getInput(1),
                    q.getInput(2)));
            if (bias != null) in.add(bias);
            return NodeProto.newBuilder()
                    .setOpType("QLinearConv")
                    .setName(conv.getName())
                    .addAllInput(in)
                    .addOutput(q.getOutput(0))
                    .addAllAttribute(conv.getAttributeList())
                    .build();
        }

        /**
         * A max pool between a DequantizeLinear and a QuantizeLinear of the same scale and zero point: the same max
         * pool of the 8-bit values (dequantizing is increasing, and quantizing a dequantized value gives it back;
         * the padding, the type's lowest value, quantizes the float padding's minus infinity to the same), as ONNX
         * Runtime's NhwcMaxPool runs it.
         */
        private NodeProto maxPool(NodeProto mp, NodeProto q, Const ys, Const yz) {
            NodeProto dx = activation(mp.getInput(0));
            if (dx == null
                    || mp.getOutputCount() != 1
                    || hasAttr(mp, "storage_order") && attr(mp, "storage_order") != 0) return null;
            Const xs = param(dx, 1), xz = param(dx, 2);
            if (xz.dtype() != yz.dtype() || xz.getLong(0) != yz.getLong(0) || (float) xs.get(0) != (float) ys.get(0))
                return null;
            return NodeProto.newBuilder()
                    .setOpType("MaxPool")
                    .setName(mp.getName())
                    .addInput(dx.getInput(0))
                    .addOutput(q.getOutput(0))
                    .addAllAttribute(mp.getAttributeList())
                    .build();
        }

        /** MatMul of a DequantizeLinear'd activation by a DequantizeLinear'd 2-D 8-bit initializer: QLinearMatMul. */
        private NodeProto matmul(NodeProto mm, NodeProto q) {
            NodeProto da = activation(mm.getInput(0)), db = weight(mm.getInput(1));
            if (da == null || db == null) return null;
            Const b = constants.apply(db.getInput(0)), bs = param(db, 1), bz = param(db, 2);
            if (b == null || b.rank() != 2 || bs == null || bz == null || bs.size() != bz.size()) return null;
            long cols = b.shape()[1];
            if (bs.size() != 1
                    && (bs.size() != cols || bs.rank() != 1 || !(attr(db, "axis") == 1 || attr(db, "axis") == -1)))
                return null;
            if (!QuantMatmulOps.packable(b.dtype(), bz, cols)) return null;
            return NodeProto.newBuilder()
                    .setOpType("QLinearMatMul")
                    .setName(mm.getName())
                    .addAllInput(List.of(
                            da.getInput(0),
                            da.getInput(1),
                            da.getInput(2),
                            db.getInput(0),
                            db.getInput(1),
                            db.getInput(2),
                            q.getInput(1),
                            q.getInput(2)))
                    .addOutput(q.getOutput(0))
                    .build();
        }

        /**
         * The int32 initializer behind a bias DequantizeLinear whose zero points are 0 and whose scale is x_scale
         * times the weight's (per channel), or null.
         */
        private String bias(String name, double xs, Const ws, long co) {
            NodeProto db = producer.get(name);
            if (db == null || !isDequantize(db)) return null;
            Const b = constants.apply(db.getInput(0)), bs = param(db, 1);
            if (b == null || b.dtype() != DType.INT32 || b.rank() != 1 || b.shape()[0] != co || bs == null) return null;
            if (bs.size() != 1 && bs.size() != co) return null;
            if (db.getInputCount() > 2 && !db.getInput(2).isEmpty()) {
                Const bz = constants.apply(db.getInput(2));
                if (bz == null) return null;
                for (int i = 0; i < bz.size(); i++) if (bz.getLong(i) != 0) return null;
            }
            for (int o = 0; o < co; o++) {
                double want = (float) xs * (float) ws.get(ws.size() == 1 ? 0 : o);
                double have = bs.get(bs.size() == 1 ? 0 : o);
                if (Math.abs(have - want) > BIAS_SCALE_RTOL * Math.abs(want)) return null;
            }
            return db.getInput(0);
        }

        /** The DequantizeLinear of a computed 8-bit tensor with one scale and zero point behind {@code name}. */
        private NodeProto activation(String name) {
            NodeProto d = producer.get(name);
            if (d == null || !isDequantize(d) || constants.apply(d.getInput(0)) != null) return null;
            Const s = scalarParam(d, 1), z = scalarParam(d, 2);
            return s != null && s.isFloat() && z != null && eightBit(z.dtype()) ? d : null;
        }

        /** The DequantizeLinear of an initializer behind {@code name} (no blocks). */
        private NodeProto weight(String name) {
            NodeProto d = producer.get(name);
            if (d == null || !isDequantize(d) || constants.apply(d.getInput(0)) == null) return null;
            return attr(d, "block_size") == 0 && d.getInputCount() >= 3 ? d : null;
        }

        /** The node producing {@code name} when {@code user} is its only reader and the graph does not return it. */
        private NodeProto soleProducer(String name, NodeProto user) {
            List<NodeProto> readers = consumers.getOrDefault(name, List.of());
            if (graphOutputs.contains(name) || readers.size() != 1 || readers.get(0) != user) return null;
            NodeProto p = producer.get(name);
            return p == null || p.getOutputCount() != 1 ? null : p;
        }

        private Const param(NodeProto n, int i) {
            return i < n.getInputCount() && !n.getInput(i).isEmpty() ? constants.apply(n.getInput(i)) : null;
        }

        private Const scalarParam(NodeProto n, int i) {
            Const c = param(n, i);
            return c != null && c.size() == 1 ? c : null;
        }
    }

    private static boolean isDequantize(NodeProto n) {
        return n.getOpType().equals("DequantizeLinear") && n.getDomain().isEmpty();
    }

    private static boolean eightBit(DType t) {
        return t == DType.UINT8 || t == DType.INT8;
    }

    /** An integer attribute, with ONNX's defaults for the ones read here (axis 1, group 1, block_size 0). */
    private static long attr(NodeProto n, String name) {
        for (AttributeProto a : n.getAttributeList()) if (a.getName().equals(name)) return a.getI();
        return name.equals("block_size") ? 0 : 1;
    }

    private static long[] ints(NodeProto n, String name) {
        for (AttributeProto a : n.getAttributeList())
            if (a.getName().equals(name))
                return a.getIntsList().stream().mapToLong(Long::longValue).toArray();
        return null;
    }

    private static List<Long> boxed(long[] v) {
        List<Long> out = new ArrayList<>();
        for (long x : v) out.add(x);
        return out;
    }
}
