package dev.kiln.graph;

import static dev.kiln.ir.DType.FLOAT32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.graph.fuse.FuseOps;
import dev.kiln.graph.pass.GraphPasses;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.util.List;
import org.apache.commons.math3.special.Erf;
import org.junit.jupiter.api.Test;

/** erf, sqrt, power and strided_slice (added for the ONNX importer) against plain Java loops, tolerance 1e-6. */
class NewGraphOpsTest {

    @Test
    void erfSqrtPowerMatchJava() {
        GraphBuilder g = new GraphBuilder("math");
        Value x = g.input("x", FLOAT32, 3, 4);
        Value e = g.unary("erf", Op.UnaryKind.ERF, x);
        Value pos = g.binary("pos", Op.BinaryKind.ADD, x, g.fill("two", 2f, 1));
        Value s = g.unary("sqrt", Op.UnaryKind.SQRT, pos);
        Value p = g.binary("pow", Op.BinaryKind.POWER, pos, g.uniform("exp", 1, 0.5, 2.5, 4));
        Graph graph = g.output(e, s, p).build();
        NDArray in = NDArray.random(FLOAT32, 3, 3, 4);
        List<NDArray> out = ReferenceExecutor.run(graph, NodeRunner.interpreter(), in);
        NDArray exp = graph.constant("exp");
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 4; j++) {
                double v = in.getDouble(i, j);
                assertEquals((float) Erf.erf(v), out.get(0).getDouble(i, j), 1e-6);
                assertEquals((float) Math.sqrt(v + 2), out.get(1).getDouble(i, j), 1e-6);
                assertEquals(
                        (float) Math.pow((float) (v + 2), exp.getDouble(j)),
                        out.get(2).getDouble(i, j),
                        1e-5);
            }
        }
        // erf and sqrt are elementwise, power is broadcast: they fuse into one group with their producer
        assertEquals(OpPattern.ELEMWISE, new Op.Unary(Op.UnaryKind.ERF).pattern());
        assertEquals(OpPattern.BROADCAST, new Op.Binary(Op.BinaryKind.POWER).pattern());
    }

    @Test
    void stridedSliceReadsEveryStepAndSurvivesThePasses() {
        GraphBuilder g = new GraphBuilder("slice");
        Value x = g.input("x", FLOAT32, 4, 7);
        Value s = g.node("s", new Op.StridedSlice(List.of(3L, 1L), List.of(-2L, 3L), List.of(2L, 2L)), x);
        Value copy = g.node("copy", new Op.StridedSlice(List.of(0L, 0L), List.of(1L, 1L), List.of(4L, 7L)), x);
        Graph graph = g.output(s, copy).build();
        assertEquals(List.of(2L, 2L), graph.value("s").shape());
        NDArray in = NDArray.random(FLOAT32, 5, 4, 7);
        List<NDArray> out = ReferenceExecutor.run(graph, NodeRunner.interpreter(), in);
        for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 2; j++)
                assertEquals(in.getDouble(3 - 2 * i, 1 + 3 * j), out.get(0).getDouble(i, j), 0);
        }
        out.get(1).assertClose(in, 0, 0);
        // a whole-tensor slice is an identity; as a graph output the passes keep it (the importer's copy for a second
        // output name)
        assertTrue(GraphPasses.optimize(graph).nodes().stream()
                .anyMatch(n -> n.output().name().equals("copy")));
        assertEquals(2, FuseOps.apply(GraphPasses.optimize(graph)).groups().size());
    }

    @Test
    void stridedSliceOutOfRangeNamesTheNode() {
        GraphBuilder g = new GraphBuilder("bad");
        Value x = g.input("x", FLOAT32, 4, 7);
        KilnException e = assertThrows(
                KilnException.class,
                () -> g.node("s", new Op.StridedSlice(List.of(0L, 5L), List.of(1L, 2L), List.of(4L, 2L)), x));
        assertTrue(e.getMessage().contains("node 's' (strided_slice)"), e.getMessage());
        assertTrue(e.getMessage().contains("axis 1"), e.getMessage());
    }
}
