package dev.kiln.graph;

import static dev.kiln.ir.DType.FLOAT32;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kiln.graph.fuse.FuseOps;
import dev.kiln.graph.fuse.FusedGroup;
import dev.kiln.graph.fuse.Partition;
import dev.kiln.runtime.NDArray;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Each fusion rule on a small graph, and the fused groups compute what the nodes do one by one. */
class FusionTest {

    private static List<String> groups(Graph g) {
        return FuseOps.apply(g).groups().stream().map(FusedGroup::description).toList();
    }

    @Test
    void convTakesBiasReluAndResidualAdd() {
        GraphBuilder b = new GraphBuilder("t");
        Value x = b.input("x", FLOAT32, 1, 6, 6, 4);
        Value c = b.conv2d("conv", x, b.weight("w", 1, 0.3, 3, 3, 4, 4), "NHWC", 1, 1, 1);
        Value y = b.relu("relu", b.add("res", b.biasAdd("bias", c, b.weight("b", 2, 0.1, 4), -1), x));
        Graph g = b.output(y).build();
        assertEquals(List.of("conv2d+bias_add+add+relu"), groups(g));
        checkAgainstNodeByNode(g, 1, 6, 6, 4);
    }

    @Test
    void twoAnchorsNeverShareAGroupAndAValueReadTwiceEndsTheChain() {
        GraphBuilder b = new GraphBuilder("t");
        Value x = b.input("x", FLOAT32, 4, 8);
        Value d1 = b.relu("r1", b.dense("d1", x, b.weight("w1", 1, 0.3, 8, 8)));
        Value d2 = b.dense("d2", d1, b.weight("w2", 2, 0.3, 8, 8));
        Value s = b.add("s", d2, d1); // d1 read by d2 and s
        Graph g = b.output(b.relu("r2", s)).build();
        assertEquals(List.of("dense+relu", "dense+add+relu"), groups(g));
        checkAgainstNodeByNode(g, 4, 8);
    }

    @Test
    void elementwiseProducersJoinAReduction() {
        GraphBuilder b = new GraphBuilder("t");
        Value x = b.input("x", FLOAT32, 4, 16);
        Value y = b.input("y", FLOAT32, 4, 16);
        Value ln = b.layerNorm(
                "ln", b.add("a", x, y), b.uniform("g", 1, 0.5, 1.5, 16), b.weight("be", 2, 0.1, 16), 1, 1e-5);
        Value sm = b.softmax("sm", b.transpose("t", b.reshape("r", ln, 4, 4, 4), 0, 2, 1), -1);
        Graph g = b.output(sm).build();
        assertEquals(List.of("add+layer_norm", "reshape+transpose+softmax"), groups(g));
        checkAgainstNodeByNode(g, 4, 16);
    }

    @Test
    void lightChainsBeforeAnAnchorStayApartAndReductionsStartGroups() {
        GraphBuilder b = new GraphBuilder("t");
        Value x = b.input("x", FLOAT32, 2, 3, 4);
        Value t = b.transpose("t", x, 0, 2, 1); // [2, 4, 3]
        Value m = b.batchMatmul("bmm", t, b.weight("w", 3, 0.5, 2, 3, 5), false, false);
        Value p = b.mean("mean", m, false, 2);
        Graph g = b.output(b.relu("r", p)).build();
        assertEquals(List.of("transpose", "batch_matmul", "mean", "relu"), groups(g));
        Partition part = FuseOps.apply(g);
        assertEquals(List.of("x"), part.groups().getFirst().dag().inputs());
        checkAgainstNodeByNode(g, 2, 3, 4);
    }

    @Test
    void aWideningStepForAnotherAnchorsEpilogueJoinsThatGroupAsAnOperand() {
        // d1's value is narrowed (float16) and widened again for d2's residual add, like a quantised ResNet's
        // downsample conv: requantize to uint8 and the dequantize its add reads. The widening step leaves d1's
        // chain (its value crosses memory as float16) and joins d2's group as the add's other operand.
        GraphBuilder b = new GraphBuilder("t");
        Value x = b.input("x", FLOAT32, 4, 8);
        Value d2 = b.dense("d2", x, b.weight("w2", 2, 0.3, 8, 8)); // first: its chain takes the add
        Value d1 = b.dense("d1", x, b.weight("w1", 1, 0.3, 8, 8));
        Value narrow = b.node("narrow", new Op.Cast(dev.kiln.ir.DType.FLOAT16), d1);
        Value wide = b.node("wide", new Op.Cast(FLOAT32), narrow);
        Graph g = b.output(b.relu("r", b.add("s", d2, wide))).build();
        assertEquals(List.of("dense+cast", "dense+cast+add+relu"), groups(g));
        checkAgainstNodeByNode(g, 4, 8);
    }

    @Test
    void aWideningStepBeforeAConvsDataInputJoinsThatConvAsItsPrologue() {
        // a QDQ MobileNet-V2's expansion conv writes 8 bits (here float16) and its depthwise conv reads them
        // widened: the widening step leaves the expansion's chain and joins the depthwise conv's group, so the value
        // crosses memory narrow
        GraphBuilder b = new GraphBuilder("t");
        Value x = b.input("x", FLOAT32, 1, 6, 6, 4);
        Value e = b.conv2d("expand", x, b.weight("we", 1, 0.3, 1, 1, 4, 8), "NHWC", 1, 0, 1);
        Value narrow = b.node("narrow", new Op.Cast(dev.kiln.ir.DType.FLOAT16), b.relu("r", e));
        Value wide = b.node("wide", new Op.Cast(FLOAT32), narrow);
        Value dw = b.conv2d("dw", wide, b.weight("wd", 2, 0.3, 3, 3, 1, 8), "NHWC", 2, 1, 8);
        Graph g = b.output(b.biasAdd("bias", dw, b.weight("bd", 3, 0.1, 8), -1)).build();
        assertEquals(List.of("conv2d+relu+cast", "cast+conv2d+bias_add"), groups(g));
        checkAgainstNodeByNode(g, 1, 6, 6, 4);

        // not when the conv reads the widened value as its weight, nor when a second node reads it
        GraphBuilder b2 = new GraphBuilder("t2");
        Value x2 = b2.input("x", FLOAT32, 1, 6, 6, 8);
        Value e2 = b2.conv2d("expand", x2, b2.weight("we", 1, 0.3, 1, 1, 8, 8), "NHWC", 1, 0, 1);
        Value wide2 =
                b2.node("wide", new Op.Cast(FLOAT32), b2.node("narrow", new Op.Cast(dev.kiln.ir.DType.FLOAT16), e2));
        Value dw2 = b2.conv2d("dw", wide2, b2.weight("wd", 2, 0.3, 3, 3, 1, 8), "NHWC", 1, 1, 8);
        Graph g2 = b2.output(b2.add("sum", dw2, wide2)).build();
        assertEquals(List.of("conv2d+cast+cast", "conv2d+add"), groups(g2));
    }

    @Test
    void aConvTakesTheLayoutCopyOfAnImageInputAsItsPrologue() {
        // the ONNX import's NCHW -> NHWC copy of the input before the first conv: one group, no transpose kernel
        GraphBuilder b = new GraphBuilder("t");
        Value x = b.input("x", FLOAT32, 1, 3, 9, 9);
        Value nhwc = b.transpose("x/nhwc", x, 0, 2, 3, 1);
        Value c = b.conv2d("conv", nhwc, b.weight("w", 1, 0.3, 3, 3, 3, 8), "NHWC", 2, 1, 1);
        Value y = b.relu("relu", b.biasAdd("bias", c, b.weight("b", 2, 0.1, 8), -1));
        Graph g = b.output(y).build();
        assertEquals(List.of("transpose+conv2d+bias_add+relu"), groups(g));
        assertEquals(
                List.of("x", "w", "b"),
                FuseOps.apply(g).groups().getFirst().dag().inputs()); // x as given
        checkAgainstNodeByNode(g, 1, 3, 9, 9);

        // not when the transposed input has a second reader, nor for a transpose of an inner value
        GraphBuilder b2 = new GraphBuilder("t2");
        Value x2 = b2.input("x", FLOAT32, 1, 3, 9, 9);
        Value t2 = b2.transpose("x/nhwc", x2, 0, 2, 3, 1);
        Value c2 = b2.conv2d("conv", t2, b2.weight("w", 1, 0.3, 3, 3, 3, 3), "NHWC", 1, 1, 1);
        Graph g2 = b2.output(b2.add("sum", c2, t2)).build();
        assertEquals(List.of("transpose", "conv2d+add"), groups(g2));
        GraphBuilder b3 = new GraphBuilder("t3");
        Value x3 = b3.input("x", FLOAT32, 1, 9, 9, 3);
        Value t3 = b3.transpose("back", b3.relu("r", x3), 0, 2, 1, 3);
        Graph g3 = b3.output(b3.conv2d("conv", t3, b3.weight("w", 1, 0.3, 3, 3, 3, 4), "NHWC", 1, 1, 1))
                .build();
        assertEquals(List.of("relu+transpose", "conv2d"), groups(g3));
    }

    @Test
    void anAnchorTakesOneRowReductionOverTheLastAxis() {
        // attention: scores = q k^T / 8, softmax over the keys; then a dense layer, residual add and layer norm
        GraphBuilder b = new GraphBuilder("t");
        Value q = b.input("q", FLOAT32, 2, 8, 16);
        Value scores = b.binary(
                "scale",
                Op.BinaryKind.DIVIDE,
                b.batchMatmul("qk", q, b.weight("k", 1, 0.3, 2, 16, 8), false, false),
                b.fill("c", 8f, 1));
        Value p = b.softmax("p", scores, -1);
        Value flat = b.reshape("flat", p, 16, 8);
        Value d = b.add("res", b.dense("d", flat, b.weight("w", 2, 0.3, 8, 8)), flat);
        Value ln = b.layerNorm("ln", d, b.uniform("g", 3, 0.5, 1.5, 8), b.weight("be", 4, 0.1, 8), 1, 1e-5);
        // a softmax over another axis and a second row reduction stay apart
        Value sm0 = b.softmax("sm0", b.relu("r", b.dense("d2", ln, b.weight("w2", 5, 0.3, 8, 8))), 0);
        Graph g = b.output(b.softmax("sm1", sm0, -1)).build();
        assertEquals(
                List.of(
                        "batch_matmul+divide+softmax",
                        "reshape",
                        "dense+add+layer_norm",
                        "dense+relu",
                        "softmax",
                        "softmax"),
                FuseOps.apply(g, true).groups().stream()
                        .map(FusedGroup::description)
                        .toList());
        checkAgainstNodeByNode(g, true, 2, 8, 16);
        // by default (networks), TVM's rule: the reductions are groups of their own
        assertEquals(
                List.of(
                        "batch_matmul+divide",
                        "softmax",
                        "reshape",
                        "dense+add",
                        "layer_norm",
                        "dense+relu",
                        "softmax",
                        "softmax"),
                groups(g));
    }

    @Test
    void aReductionTakesTheNarrowingCastItsValueIsReadThrough() {
        // a bfloat16 network: the max pool before the first block and a layer norm before a dense layer write their
        // values in bfloat16 for the converted layers: the cast is the reduction's last step, not a kernel of its own
        GraphBuilder b = new GraphBuilder("t");
        Value x = b.input("x", FLOAT32, 1, 8, 8, 4);
        Value pool = b.maxPool2d("pool", b.relu("r", x), "NHWC", 3, 2, 1);
        Value p16 = b.node("p16", new Op.Cast(dev.kiln.ir.DType.BFLOAT16), pool);
        Value flat = b.reshape("flat", b.node("p32", new Op.Cast(FLOAT32), p16), 16, 4);
        Value ln = b.layerNorm("ln", flat, b.uniform("g", 1, 0.5, 1.5, 4), b.weight("be", 2, 0.1, 4), 1, 1e-5);
        Value l16 = b.node("l16", new Op.Cast(dev.kiln.ir.DType.BFLOAT16), ln);
        // and a global pool read through a reshape by a bfloat16 classifier
        Value gp = b.reshape("gp/rows", b.mean("gp", b.node("l32", new Op.Cast(FLOAT32), l16), false, 1), 4, 4);
        Graph g = b.output(b.node("gp16", new Op.Cast(dev.kiln.ir.DType.BFLOAT16), gp))
                .build();
        assertEquals(
                List.of("relu+max_pool2d+cast", "cast+reshape+layer_norm+cast", "cast+mean+reshape+cast"), groups(g));
        checkAgainstNodeByNode(g, 1, 8, 8, 4);

        // not a widening cast, not a cast of a value another node also reads; a cast that is a graph output does
        GraphBuilder b2 = new GraphBuilder("t2");
        Value x2 = b2.input("x", FLOAT32, 4, 16);
        Value m = b2.mean("m", x2, true, 1);
        Value wide = b2.node("wide", new Op.Cast(dev.kiln.ir.DType.FLOAT64), m);
        Value sm = b2.softmax("sm", x2, -1);
        Value s16 = b2.node("s16", new Op.Cast(dev.kiln.ir.DType.FLOAT16), sm);
        Value sm2 = b2.softmax("sm2", x2, 0);
        Value out16 = b2.node("out16", new Op.Cast(dev.kiln.ir.DType.BFLOAT16), sm2);
        Graph g2 = b2.output(wide, s16, b2.relu("r", sm), out16).build();
        assertEquals(List.of("mean", "cast", "softmax", "cast", "softmax+cast", "relu"), groups(g2));
    }

    @Test
    void aGraphOutputIsNeverInsideAGroup() {
        GraphBuilder b = new GraphBuilder("t");
        Value x = b.input("x", FLOAT32, 4, 8);
        Value d = b.dense("d", x, b.weight("w", 1, 0.3, 8, 8));
        Graph g = b.output(d, b.relu("r", d)).build();
        assertEquals(List.of("dense", "relu"), groups(g));
    }

    /** Runs every fused group's DAG in the interpreter and compares the outputs with the node-by-node reference. */
    static void checkAgainstNodeByNode(Graph g, long... inputShape) {
        checkAgainstNodeByNode(g, false, inputShape);
    }

    /** As above, with the groups of {@code FuseOps.apply(g, rowReductions)}. */
    static void checkAgainstNodeByNode(Graph g, boolean rowReductions, long... inputShape) {
        Partition p = FuseOps.apply(g, rowReductions);
        try (NodeRunner r = NodeRunner.interpreter()) {
            NDArray[] ins = new NDArray[g.inputs().size()];
            for (int i = 0; i < ins.length; i++)
                ins[i] = NDArray.random(FLOAT32, 40 + i, g.inputs().get(i).dims());
            List<NDArray> expected = ReferenceExecutor.run(g, r, ins);
            java.util.Map<String, NDArray> env = new java.util.HashMap<>(g.constants());
            for (int i = 0; i < ins.length; i++) env.put(g.inputs().get(i).name(), ins[i]);
            for (FusedGroup gr : p.groups()) {
                Value out = g.value(gr.output());
                NDArray o = NDArray.allocate(out.dtype(), out.dims());
                env.put(out.name(), o);
                NDArray[] args = gr.dag().arguments().stream().map(env::get).toArray(NDArray[]::new);
                r.run(gr.dag().dag(), args);
            }
            for (int i = 0; i < g.outputs().size(); i++)
                env.get(g.outputs().get(i)).assertClose(expected.get(i), 1e-6, 1e-6);
        }
    }
}
