package dev.kiln.graph;

import static dev.kiln.ir.DType.FLOAT32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.graph.fuse.FuseOps;
import dev.kiln.graph.fuse.Partition;
import dev.kiln.graph.pass.GraphPasses;
import dev.kiln.ir.KilnException;
import dev.kiln.models.Models;
import dev.kiln.runtime.NDArray;
import java.util.List;
import org.junit.jupiter.api.Test;

class GraphTest {

    @Test
    void shapesAreInferredAndBadNodesNameTheNode() {
        GraphBuilder g = new GraphBuilder("t");
        Value x = g.input("x", FLOAT32, 1, 8, 8, 3);
        Value w = g.weight("w", 1, 0.5, 3, 3, 3, 4);
        Value y = g.conv2d("c", x, w, "NHWC", 2, 1, 1);
        assertEquals(List.of(1L, 4L, 4L, 4L), y.shape());
        Value bad = g.weight("w2", 2, 0.5, 3, 3, 5, 4);
        KilnException e = assertThrows(KilnException.class, () -> g.conv2d("bad", y, bad, "NHWC", 1, 1, 1));
        assertTrue(e.getMessage().contains("node 'bad' (conv2d)"), e.getMessage());
        assertThrows(KilnException.class, () -> g.relu("c", y)); // name taken
    }

    @Test
    void printoutListsNodesWithAttributes() {
        Graph net = Models.resnet18(1, 32, 8, 10, 1);
        String s = net.toString();
        assertTrue(
                s.contains("conv1[1, 16, 16, 8]:float32 = conv2d(data, conv1.weight)  NHWC strides=[2, 2] pads=[3, 3, "
                        + "3, 3]"),
                s);
        assertEquals(1, net.outputs().size());
        assertEquals(List.of(1L, 10L), net.outputValues().getFirst().shape());
    }

    @Test
    void passesKeepTheResultAndFoldEveryBatchNorm() {
        Graph net = Models.resnet18(1, 32, 8, 10, 3);
        Graph opt = GraphPasses.optimize(net);
        assertTrue(net.nodes().stream().anyMatch(n -> n.op() instanceof Op.BatchNorm));
        assertTrue(opt.nodes().stream().noneMatch(n -> n.op() instanceof Op.BatchNorm), opt.toString());
        try (NDArray x = NDArray.random(FLOAT32, 7, 1, 32, 32, 3);
                NodeRunner r = NodeRunner.interpreter()) {
            List<NDArray> a = ReferenceExecutor.run(net, r, x);
            List<NDArray> b = ReferenceExecutor.run(opt, r, x);
            b.getFirst().assertClose(a.getFirst(), 1e-4, 1e-4);
            a.forEach(NDArray::close);
            b.forEach(NDArray::close);
        }
    }

    @Test
    void resnetPartitionFusesEpilogues() {
        Graph opt = GraphPasses.optimize(Models.resnet18(1, 32, 8, 10, 3));
        Partition p = FuseOps.apply(opt);
        System.out.println(p);
        long convGroups = p.groups().stream()
                .filter(gr -> gr.description().startsWith("conv2d"))
                .count();
        assertEquals(20, convGroups);
        assertTrue(
                p.groups().stream().anyMatch(gr -> gr.description().equals("conv2d+bias_add+add+relu")), p.toString());
    }

    @Test
    void bigModelsBuild() {
        Graph r50 = GraphPasses.optimize(Models.resnet50(1, 224, 1));
        assertEquals(
                53,
                r50.nodes().stream().filter(n -> n.op() instanceof Op.Conv2d).count());
        Partition p = FuseOps.apply(r50);
        System.out.println(p);
        Graph mb = GraphPasses.optimize(Models.mobilenetV2(1, 224, 1));
        assertEquals(
                52, mb.nodes().stream().filter(n -> n.op() instanceof Op.Conv2d).count());
        Graph bert = Models.bertLayer(128, 768, 12, 3072, 1);
        System.out.println(FuseOps.apply(GraphPasses.optimize(bert)));
    }
}
