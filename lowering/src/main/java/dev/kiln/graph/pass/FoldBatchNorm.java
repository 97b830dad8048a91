package dev.kiln.graph.pass;

import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.Node;
import dev.kiln.graph.Op;
import dev.kiln.ir.DType;
import dev.kiln.runtime.NDArray;
import java.util.List;

/**
 * Folds inference batch norm into the conv2d or dense before it (TVM's SimplifyInference +
 * FoldScaleAxis, backward case; ../shared/reference/networks-notes.md §1). With
 * {@code s = gamma / sqrt(var + eps)}, a {@code conv -> batch_norm} becomes
 * {@code conv' -> bias_add} where the weight is scaled along its output-channel axis,
 * {@code W'[.., o] = W[.., o] * s[o]}, and the bias is {@code beta - mean * s}; a
 * {@code conv -> bias_add(b) -> batch_norm} becomes {@code conv' -> bias_add((b - mean) * s + beta)}.
 * It fires only when the weight, the bias and the statistics are constants, the batch norm acts on
 * the conv's output-channel axis, and each folded value has no other reader (as TVM requires).
 * The bias_add keeps the batch norm's name, so later nodes are untouched. Other batch norms are
 * left to {@link SimplifyInference}.
 */
public final class FoldBatchNorm {
    private FoldBatchNorm() {}

    public static Graph apply(Graph g) {
        GraphEditor e = new GraphEditor(g);
        for (int i = 0; i < e.nodes.size(); i++) {
            Node bn = e.nodes.get(i);
            if (!(bn.op() instanceof Op.BatchNorm b)) continue;
            if (!bn.inputs().subList(1, 5).stream().allMatch(g::isConstant)) continue;
            Node prev = g.producer(bn.inputs().get(0));
            Node bias = null;
            Node anchor = prev;
            if (prev != null
                    && prev.op() instanceof Op.BiasAdd
                    && g.isConstant(prev.inputs().get(1))
                    && g.consumers(prev.name()).size() == 1) {
                bias = prev;
                anchor = g.producer(prev.inputs().get(0));
            }
            if (anchor == null
                    || g.consumers(anchor.name()).size() != 1
                    || g.isOutput(anchor.name())
                    || (bias != null && g.isOutput(bias.name()))) continue;
            int outAxis = outputChannelAxisOfWeight(anchor.op());
            if (outAxis < 0 || !g.isConstant(anchor.inputs().get(1))) continue;
            int rank = anchor.output().shape().size();
            int bnAxis = b.axis() < 0 ? b.axis() + rank : b.axis();
            if (bnAxis != outputChannelAxisOfOutput(anchor.op())) continue;
            if (bias != null && (((Op.BiasAdd) bias.op()).axis() + rank) % rank != bnAxis) continue;

            float[] mean = g.constant(bn.inputs().get(1)).toFloatArray();
            float[] var = g.constant(bn.inputs().get(2)).toFloatArray();
            float[] gamma = g.constant(bn.inputs().get(3)).toFloatArray();
            float[] beta = g.constant(bn.inputs().get(4)).toFloatArray();
            float[] oldBias =
                    bias == null ? null : g.constant(bias.inputs().get(1)).toFloatArray();
            int c = mean.length;
            double[] s = new double[c];
            float[] newBias = new float[c];
            for (int o = 0; o < c; o++) {
                s[o] = gamma[o] / Math.sqrt(var[o] + b.epsilon());
                double b0 = oldBias == null ? 0 : oldBias[o];
                newBias[o] = (float) ((b0 - mean[o]) * s[o] + beta[o]);
            }
            NDArray w = g.constant(anchor.inputs().get(1));
            if (w.dtype() != DType.FLOAT32) continue;
            NDArray scaled = scale(w, outAxis, s);
            String wName = e.freshName(anchor.inputs().get(1) + ".bn_folded");
            e.constants.put(wName, scaled);
            String bName = e.freshName(bn.name() + ".folded_bias");
            NDArray nb = GraphBuilder.autoArray(DType.FLOAT32, c);
            for (int o = 0; o < c; o++) nb.setDoubleFlat(newBias[o], o);
            e.constants.put(bName, nb);
            int ai = e.nodes.indexOf(anchor);
            e.nodes.set(ai, new Node(anchor.op(), List.of(anchor.inputs().get(0), wName), anchor.output()));
            e.nodes.set(i, new Node(new Op.BiasAdd(bnAxis), List.of(anchor.name(), bName), bn.output()));
        }
        return e.build();
    }

    /** The axis of the weight that indexes output channels (conv NHWC: HWIO -> 3, NCHW: OIHW -> 0, dense: 0), or -1. */
    static int outputChannelAxisOfWeight(Op op) {
        return switch (op) {
            case Op.Conv2d c -> c.layout().equals("NHWC") ? 3 : 0;
            case Op.Dense d -> 0;
            default -> -1;
        };
    }

    /** The axis of the op's output that holds channels. */
    static int outputChannelAxisOfOutput(Op op) {
        return switch (op) {
            case Op.Conv2d c -> c.layout().equals("NHWC") ? 3 : 1;
            case Op.Dense d -> 1;
            default -> -1;
        };
    }

    /** {@code w} with every element multiplied by {@code s[index along axis]}, in fresh memory. */
    static NDArray scale(NDArray w, int axis, double[] s) {
        long[] shape = w.shape();
        NDArray out = GraphBuilder.autoArray(w.dtype(), shape);
        long inner = 1;
        for (int d = axis + 1; d < shape.length; d++) inner *= shape[d];
        long n = w.numElements();
        for (long i = 0; i < n; i++) {
            int ch = (int) ((i / inner) % shape[axis]);
            out.setDoubleFlat((float) (w.getDoubleFlat(i) * s[ch]), i);
        }
        return out;
    }
}
