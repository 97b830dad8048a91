package dev.kiln.graph.pass;

import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.Node;
import dev.kiln.graph.Op;
import dev.kiln.graph.Value;
import dev.kiln.ir.DType;
import dev.kiln.runtime.NDArray;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns each batch norm with constant statistics that {@link FoldBatchNorm} could not fold into
 * {@code x * scale + shift} (TVM's SimplifyInference), two broadcast ops with precomputed
 * constants shaped to broadcast along the channel axis, which fusion then attaches to whatever
 * computes {@code x}. The add keeps the batch norm's name.
 */
public final class SimplifyInference {
    private SimplifyInference() {}

    public static Graph apply(Graph g) {
        GraphEditor e = new GraphEditor(g);
        List<Node> out = new ArrayList<>();
        for (Node n : e.nodes) {
            if (!(n.op() instanceof Op.BatchNorm b)
                    || !n.inputs().subList(1, 5).stream().allMatch(g::isConstant)
                    || n.output().dtype() != DType.FLOAT32) {
                out.add(n);
                continue;
            }
            int rank = n.output().shape().size();
            int axis = b.axis() < 0 ? b.axis() + rank : b.axis();
            float[] mean = g.constant(n.inputs().get(1)).toFloatArray();
            float[] var = g.constant(n.inputs().get(2)).toFloatArray();
            float[] gamma = g.constant(n.inputs().get(3)).toFloatArray();
            float[] beta = g.constant(n.inputs().get(4)).toFloatArray();
            long[] shape = new long[rank - axis];
            java.util.Arrays.fill(shape, 1);
            shape[0] = mean.length;
            NDArray scale = GraphBuilder.autoArray(DType.FLOAT32, shape);
            NDArray shift = GraphBuilder.autoArray(DType.FLOAT32, shape);
            for (int c = 0; c < mean.length; c++) {
                double s = gamma[c] / Math.sqrt(var[c] + b.epsilon());
                scale.setDoubleFlat((float) s, c);
                shift.setDoubleFlat((float) (beta[c] - mean[c] * s), c);
            }
            String sName = e.freshName(n.name() + ".scale_const");
            e.constants.put(sName, scale);
            String tName = e.freshName(n.name() + ".shift_const");
            e.constants.put(tName, shift);
            Value scaled = new Value(
                    e.freshName(n.name() + ".scaled"),
                    n.output().dtype(),
                    n.output().shape());
            out.add(new Node(
                    new Op.Binary(Op.BinaryKind.MULTIPLY), List.of(n.inputs().get(0), sName), scaled));
            out.add(new Node(new Op.Binary(Op.BinaryKind.ADD), List.of(scaled.name(), tName), n.output()));
        }
        e.nodes.clear();
        e.nodes.addAll(out);
        return e.build();
    }
}
