package dev.kiln.graph;

import static dev.kiln.ir.DType.FLOAT32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.graph.pass.FoldBatchNorm;
import dev.kiln.graph.pass.FoldConstants;
import dev.kiln.graph.pass.GraphPasses;
import dev.kiln.graph.pass.RemoveIdentities;
import dev.kiln.graph.pass.SimplifyInference;
import dev.kiln.runtime.NDArray;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Each graph pass keeps the result (checked in the interpreter) and does what it says. */
class GraphPassesTest {

    private static List<String> kinds(Graph g) {
        return g.nodes().stream().map(n -> n.op().kind()).toList();
    }

    private static Value bn(GraphBuilder b, String n, Value x, long c, int axis) {
        return b.batchNorm(
                n,
                x,
                b.uniform(n + ".m", 1, -0.5, 0.5, c),
                b.uniform(n + ".v", 2, 0.5, 2, c),
                b.uniform(n + ".g", 3, 0.5, 1.5, c),
                b.uniform(n + ".b", 4, -0.5, 0.5, c),
                axis,
                1e-5);
    }

    static void sameResult(Graph a, Graph b) {
        sameResult(a, b, 1e-5);
    }

    /** {@code a} and {@code b} on the same seeded inputs, in the interpreter, within {@code tol} (rtol and atol). */
    static void sameResult(Graph a, Graph b, double tol) {
        try (NodeRunner r = NodeRunner.interpreter()) {
            NDArray[] ins = a.inputs().stream()
                    .map(v -> NDArray.random(FLOAT32, 9, v.dims()))
                    .toArray(NDArray[]::new);
            List<NDArray> x = ReferenceExecutor.run(a, r, ins);
            List<NDArray> y = ReferenceExecutor.run(b, r, ins);
            for (int i = 0; i < x.size(); i++) y.get(i).assertClose(x.get(i), tol, tol);
        }
    }

    @Test
    void batchNormFoldsIntoConvNhwcNchwAndDenseAndThroughABias() {
        GraphBuilder b = new GraphBuilder("t");
        Value x = b.input("x", FLOAT32, 1, 5, 5, 3);
        Value c1 = bn(b, "bn1", b.conv2d("c1", x, b.weight("w1", 1, 0.5, 3, 3, 3, 4), "NHWC", 1, 1, 1), 4, 3);
        Value t = b.transpose("nchw", c1, 0, 3, 1, 2);
        Value c2 = b.conv2d("c2", t, b.weight("w2", 2, 0.5, 6, 2, 1, 1), "NCHW", 1, 0, 2); // grouped, OIHW
        Value c2b = bn(b, "bn2", b.biasAdd("c2b", c2, b.weight("b2", 3, 0.5, 6), 1), 6, 1);
        Value f = b.reshape("f", c2b, 1, 150);
        Value d = bn(b, "bn3", b.dense("d", f, b.weight("w3", 4, 0.1, 7, 150)), 7, 1);
        Graph g = b.output(d).build();
        Graph folded = FoldBatchNorm.apply(g);
        assertEquals(
                List.of("conv2d", "bias_add", "transpose", "conv2d", "bias_add", "reshape", "dense", "bias_add"),
                kinds(folded));
        sameResult(g, folded);
    }

    @Test
    void batchNormWithTwoReadersOfTheConvBecomesMultiplyAdd() {
        GraphBuilder b = new GraphBuilder("t");
        Value x = b.input("x", FLOAT32, 1, 4, 4, 3);
        Value c = b.conv2d("c", x, b.weight("w", 1, 0.5, 1, 1, 3, 3), "NHWC", 1, 0, 1);
        Value n = bn(b, "bn", c, 3, -1);
        Graph g = b.output(b.add("s", n, c)).build();
        Graph r = GraphPasses.optimize(g);
        assertEquals(List.of("conv2d", "multiply", "add", "add"), kinds(r));
        sameResult(g, r);
        GraphBuilder b2 = new GraphBuilder("nchw");
        Value y = b2.input("y", FLOAT32, 1, 3, 2, 2);
        Graph g2 = b2.output(bn(b2, "bn", y, 3, 1)).build();
        Graph r2 = SimplifyInference.apply(g2);
        assertEquals(
                List.of(3L, 1L, 1L),
                r2.value(r2.nodes().getFirst().inputs().get(1)).shape());
        sameResult(g2, r2);
    }

    @Test
    void constantsFoldAndIdentitiesGo() {
        GraphBuilder b = new GraphBuilder("t");
        Value x = b.input("x", FLOAT32, 2, 6);
        Value w = b.transpose("wt", b.reshape("wr", b.weight("w", 1, 0.5, 3, 2, 6), 6, 6), 1, 0); // weight-only chain
        Value y = b.dense("d", x, w);
        Value same = b.reshape("same", b.transpose("id", y, 0, 1), 2, 6);
        Value z = b.reshape("z2", b.reshape("z1", same, 3, 4), 4, 3);
        Graph g = b.output(z).build();
        Graph folded = FoldConstants.apply(g);
        assertEquals(List.of("dense", "transpose", "reshape", "reshape", "reshape"), kinds(folded));
        assertTrue(folded.isConstant("wt"));
        Graph clean = RemoveIdentities.apply(folded);
        assertEquals(List.of("dense", "reshape"), kinds(clean));
        assertEquals(List.of("d"), clean.nodes().getLast().inputs());
        sameResult(g, clean);
    }

    @Test
    void winogradReplacesTheThreeByThreeStrideOneFloatConvsWithAConstantWeight() {
        GraphBuilder b = new GraphBuilder("t");
        Value x = b.input("x", FLOAT32, 1, 10, 9, 32);
        Value w = b.weight("w", 1, 0.2, 3, 3, 32, 32);
        Value c1 = b.relu("r1", b.conv2d("c1", x, w, "NHWC", 1, 1, 1)); // F(2x2): 10 x 9 output, 32 -> 32
        Value c2 = b.conv2d("c2", c1, w, "NHWC", 1, 1, 1); // the same weight: transformed once
        Value s2 = b.conv2d("s2", c2, b.weight("w2", 2, 0.2, 3, 3, 32, 32), "NHWC", 2, 1, 1); // strided: direct
        Value p1 = b.conv2d("p1", c2, b.weight("w3", 3, 0.2, 1, 1, 32, 32), "NHWC", 1, 0, 1); // 1x1: direct
        Value small = b.conv2d("small", b.input("y", FLOAT32, 1, 6, 6, 32), w, "NHWC", 1, 1, 1); // 6 x 6: direct
        Value narrow = b.conv2d(
                "narrow", b.input("z", FLOAT32, 1, 8, 8, 8), b.weight("w4", 4, 0.2, 3, 3, 8, 8), "NHWC", 1, 1, 1);
        Value wide = b.conv2d( // 96 channels: F(4x4), padding only at the top and left
                "wide", b.input("v", FLOAT32, 1, 7, 8, 96), b.weight("w5", 5, 0.05, 3, 3, 96, 96), "NHWC", 1, 1, 1);
        Graph g = b.output(s2, p1, small, narrow, wide).build();
        Graph r = dev.kiln.graph.pass.WinogradConvs.apply(g);
        assertEquals(
                List.of(
                        "conv2d_winograd",
                        "relu",
                        "conv2d_winograd",
                        "conv2d",
                        "conv2d",
                        "conv2d",
                        "conv2d",
                        "conv2d_winograd"),
                kinds(r));
        assertEquals(
                List.of("w.winograd2", "w5.winograd4"),
                r.constants().keySet().stream()
                        .filter(k -> k.contains("winograd"))
                        .toList());
        assertEquals(List.of(4L, 4L, 32L, 32L), r.value("w.winograd2").shape());
        assertEquals(List.of(6L, 6L, 96L, 96L), r.value("w5.winograd4").shape());
        // the transforms round differently from the direct sums: within 1e-4 of values of order 1
        sameResult(g, r, 1e-4);
    }
}
