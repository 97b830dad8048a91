package dev.kiln.graph.pass;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.fixtures.TensorCoreNets;
import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.Node;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.Op;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.graph.Value;
import dev.kiln.ir.DType;
import dev.kiln.runtime.NDArray;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * {@link ToBfloat16}: which layers become bfloat16 dot products and which stay float32 (and why), and the numbers:
 * a converted layer computes exactly the float32 layer of bfloat16-rounded operands (the interpreter, only the order
 * of the float32 sums differing: rtol 1e-5); a small network stays within bfloat16's rounding of its float32 result.
 */
class ToBfloat16Test {

    /** x [1, 7, 6, 9] -> conv 3x3 (9 -> 16, odd channels padded) -> bias -> relu -> dense of the flattened map. */
    private static Graph convDense(UnaryOperator<NDArray> round) {
        GraphBuilder b = new GraphBuilder("conv_dense");
        Value x = b.input("x", FLOAT32, 1, 7, 6, 9);
        Value w = b.constant("w", round.apply(GraphBuilder.randomArray(1, -0.5, 0.5, 3, 3, 9, 16)));
        Value c = b.relu(
                "r", b.biasAdd("bias", b.conv2d("conv", x, w, "NHWC", 2, 1, 1), b.weight("bias_w", 2, 0.5, 16), 3));
        Value flat = b.reshape("flat", c, 1, 4 * 3 * 16);
        Value wd = b.constant("wd", round.apply(GraphBuilder.randomArray(3, -0.5, 0.5, 32, 4 * 3 * 16)));
        return b.output(b.dense("fc", flat, wd)).build();
    }

    private static NDArray toBf16AndBack(NDArray a) {
        NDArray out = GraphBuilder.autoArray(FLOAT32, a.shape());
        for (long i = 0; i < a.numElements(); i++) {
            out.setDoubleFlat(
                    dev.kiln.runtime.Numerics.fromBFloat16Bits(
                            dev.kiln.runtime.Numerics.toBFloat16Bits(a.getDoubleFlat(i))),
                    i);
        }
        return out;
    }

    @Test
    void aConvertedLayerIsTheFloat32LayerOfRoundedOperands() {
        ToBfloat16.Result r = ToBfloat16.apply(convDense(UnaryOperator.identity()));
        assertThat(r.converted()).containsExactly("conv", "fc");
        assertThat(r.kept()).isEmpty();
        Graph g = r.graph();
        assertThat(g.nodes().stream().map(n -> n.op().kind()))
                .contains("cast", "conv2d_packed", "matmul_packed")
                .doesNotContain("conv2d", "dense");
        assertThat(g.constants().values()).filteredOn(a -> a.rank() >= 4).allSatisfy(a -> assertThat(a.dtype())
                .isEqualTo(DType.BFLOAT16));
        // the conv's 3x3x9x16 weight packed to [1, 3, 3, 5, 16, 2]: 9 input channels padded to 10
        assertThat(g.constants().values()).anySatisfy(a -> assertThat(a.shape()).containsExactly(1, 3, 3, 5, 16, 2));
        // the reference: the float32 graph with its weights rounded to bfloat16, and the conv's input rounded too;
        // the dense layer's input (the relu's output) is rounded by the converted graph only, so compare each layer
        // of the converted graph against a float32 layer of its own rounded operands
        try (NodeRunner ref = NodeRunner.interpreter();
                NDArray x = NDArray.random(FLOAT32, 7, 1, 7, 6, 9)) {
            NDArray y = ReferenceExecutor.run(g, ref, x).getFirst();
            Graph rounded = convDense(ToBfloat16Test::toBf16AndBack);
            Graph convOnly = prefix(rounded, "r");
            NDArray hidden =
                    ReferenceExecutor.run(convOnly, ref, toBf16AndBack(x)).getFirst();
            GraphBuilder b = new GraphBuilder("fc_only");
            Value h = b.input("h", FLOAT32, 1, 4 * 3 * 16);
            Graph fcOnly = b.output(b.dense("fc", h, b.constant("wd", rounded.constant("wd"))))
                    .build();
            NDArray expected = ReferenceExecutor.run(fcOnly, ref, toBf16AndBack(flat(hidden)))
                    .getFirst();
            y.assertClose(expected, 1e-5, 1e-6);
        }
    }

    private static NDArray flat(NDArray a) {
        NDArray out = GraphBuilder.autoArray(FLOAT32, 1, a.numElements());
        for (long i = 0; i < a.numElements(); i++) out.setDoubleFlat(a.getDoubleFlat(i), i);
        return out;
    }

    /** The graph up to and including node {@code last}, whose output becomes the graph's. */
    private static Graph prefix(Graph g, String last) {
        GraphEditor e = new GraphEditor(g);
        e.outputs.clear();
        e.outputs.add(last);
        return e.build();
    }

    /**
     * A small CNN: the convolutions and dense layers the instructions take are converted (a conv to 24 channels and a
     * dense layer of 10 units computing 32 and 16, sliced), the first conv (3 input channels) and a depthwise
     * convolution stay float32 with their reasons;
     * the output is within 2^-6 of the float32 network's largest output (bfloat16 keeps 8 significant bits; a wrong
     * packing is off by O(1)).
     */
    @Test
    void aSmallNetworkKeepsWhatTheInstructionsCannotTakeAndStaysNearFloat32() {
        GraphBuilder b = new GraphBuilder("small_cnn");
        Value x = b.input("x", FLOAT32, 1, 8, 8, 3);
        Value c1 = b.relu("r1", b.conv2d("c1", x, b.weight("w1", 1, 0.4, 3, 3, 3, 32), "NHWC", 1, 1, 1));
        Value dw = b.relu("r2", b.conv2d("dw", c1, b.weight("w2", 2, 0.4, 3, 3, 1, 32), "NHWC", 1, 1, 32));
        Value c3 = b.conv2d("c3", dw, b.weight("w3", 3, 0.2, 1, 1, 32, 24), "NHWC", 1, 0, 1);
        Value c4 = b.relu("r4", b.conv2d("c4", c3, b.weight("w4", 4, 0.2, 3, 3, 24, 32), "NHWC", 2, 1, 1));
        Value pooled = b.mean("gap", c4, false, 1, 2);
        Value fc1 = b.relu("r5", b.dense("fc1", pooled, b.weight("wf1", 5, 0.3, 48, 32)));
        Graph net =
                b.output(b.dense("fc2", fc1, b.weight("wf2", 6, 0.3, 10, 48))).build();
        ToBfloat16.Result r = ToBfloat16.apply(net);
        assertThat(r.converted()).containsExactly("c3", "c4", "fc1", "fc2");
        assertThat(r.kept()).containsOnlyKeys("c1", "dw");
        assertThat(r.kept().get("c1")).contains("3 input channels");
        assertThat(r.kept().get("dw")).contains("32 groups");
        // one cast per activation read by converted layers, the float32 convs untouched
        assertThat(r.graph().nodes().stream().filter(n -> n.op() instanceof Op.Cast))
                .hasSize(4);
        assertThat(r.graph().nodes().stream().map(Node::name)).contains("c1", "dw", "c3.padded", "fc2.padded");
        // 24 and 10 output channels computed as 32 and 16, the first ones sliced off under the layer's own name
        assertThat(r.graph().value("c3.padded").shape()).containsExactly(1L, 8L, 8L, 32L);
        assertThat(r.graph().producer("c3").op()).isInstanceOf(Op.StridedSlice.class);
        assertThat(r.graph().value("fc2.padded").shape()).containsExactly(1L, 16L);
        try (NodeRunner ref = NodeRunner.interpreter();
                NDArray in = NDArray.random(FLOAT32, 11, 1, 8, 8, 3)) {
            NDArray y32 = ReferenceExecutor.run(net, ref, in).getFirst();
            NDArray y16 = ReferenceExecutor.run(r.graph(), ref, in).getFirst();
            double max = 0, err = 0;
            for (long i = 0; i < y32.numElements(); i++) {
                max = Math.max(max, Math.abs(y32.getDoubleFlat(i)));
                err = Math.max(err, Math.abs(y32.getDoubleFlat(i) - y16.getDoubleFlat(i)));
            }
            assertThat(max).isGreaterThan(0.01);
            assertThat(err).isLessThanOrEqualTo(Math.scalb(max, -6)).isGreaterThan(0);
        }
    }

    /**
     * {@link ToBfloat16.Activations#BFLOAT16}: the values converted layers read are written in bfloat16 by the kernels
     * that compute them: no block input is cast in a kernel of its own (with float32 activations each one, read by a
     * conv and by a residual add, is), each residual add widens its bfloat16 operand in its own group, and the result
     * stays within 2^-6 of the float32 network's largest output.
     */
    @Test
    void bfloat16ActivationsAreWrittenByTheirProducersAndWidenedWhereFloat32Reads() {
        Graph net = TensorCoreNets.residualBlocks(6);
        ToBfloat16.Result wide = ToBfloat16.apply(net);
        ToBfloat16.Result narrow = ToBfloat16.apply(net, ToBfloat16.Activations.BFLOAT16);
        assertThat(narrow.converted()).isEqualTo(wide.converted()).containsExactly("c0", "c1", "c2", "c3", "fc");
        // the values cast in a kernel of their own: the graph input, and with float32 activations the two block
        // inputs; the pooled vector's cast is its reduction's last step (FuseOps.isNarrowingEpilogue)
        assertThat(TensorCoreNets.castKernels(wide.graph())).containsExactlyInAnyOrder("x", "y0", "y1");
        assertThat(TensorCoreNets.castKernels(narrow.graph())).containsExactlyInAnyOrder("x");
        Graph g = narrow.graph();
        // y0 and y1 are read in bfloat16 only: by their convs and, widened, by the residual adds
        for (String y : new String[] {"y0", "y1"}) {
            assertThat(g.nodes().stream().filter(n -> n.inputs().contains(y)))
                    .singleElement()
                    .satisfies(n -> assertThat(n.output().dtype()).isEqualTo(DType.BFLOAT16));
        }
        String groups = dev.kiln.graph.fuse.FuseOps.apply(g).toString();
        assertThat(groups).contains("conv2d_packed+cast+add+relu+cast"); // c2's kernel: y0 widened, y1 narrowed
        assertThat(groups).contains("mean+cast"); // the pooled vector written in bfloat16 by its pool
        try (NodeRunner ref = NodeRunner.interpreter();
                NDArray in = NDArray.random(FLOAT32, 13, 1, 6, 6, 16)) {
            NDArray y32 = ReferenceExecutor.run(net, ref, in).getFirst();
            NDArray y16 = ReferenceExecutor.run(g, ref, in).getFirst();
            NDArray yw = ReferenceExecutor.run(wide.graph(), ref, in).getFirst();
            double max = 0, err = 0, diff = 0;
            for (long i = 0; i < y32.numElements(); i++) {
                max = Math.max(max, Math.abs(y32.getDoubleFlat(i)));
                err = Math.max(err, Math.abs(y32.getDoubleFlat(i) - y16.getDoubleFlat(i)));
                diff = Math.max(diff, Math.abs(yw.getDoubleFlat(i) - y16.getDoubleFlat(i)));
            }
            assertThat(max).isGreaterThan(0.01);
            assertThat(err).isLessThanOrEqualTo(Math.scalb(max, -6)).isGreaterThan(0);
            assertThat(diff).as("the residual adds read rounded values").isGreaterThan(0);
        }
    }

    /**
     * A BERT layer's attention: both batched products (scores = q k and context = probs v, two activations each)
     * compute on bfloat16 operands with float32 sums, the softmax writes its probabilities in bfloat16 in its own
     * kernel (FuseOps' narrowing epilogue), and the layer stays within 2^-5 of float32's largest output, with float32
     * and with bfloat16 activations.
     */
    @Test
    void attentionsBatchedProductsRunOnBfloat16OperandsWithFloat32Sums() {
        Graph bert = dev.kiln.models.Models.bertLayer(16, 32, 2, 64, 5);
        for (ToBfloat16.Activations act : ToBfloat16.Activations.values()) {
            ToBfloat16.Result r = ToBfloat16.apply(bert, act);
            assertThat(r.converted()).as(act.name()).contains("scores", "context");
            Graph g = r.graph();
            assertThat(g.nodes())
                    .filteredOn(n -> n.op() instanceof Op.BatchMatmul)
                    .hasSize(2)
                    .allSatisfy(n -> {
                        assertThat(((Op.BatchMatmul) n.op()).accumulate()).isEqualTo(DType.FLOAT32);
                        assertThat(n.inputs())
                                .allSatisfy(v -> assertThat(g.value(v).dtype()).isEqualTo(DType.BFLOAT16));
                        assertThat(n.output().dtype()).isEqualTo(FLOAT32);
                    });
            assertThat(dev.kiln.graph.fuse.FuseOps.apply(g).toString()).contains("softmax+cast ");
            double[] me = TensorCoreNets.maxAndError(bert, g, 3, 16, 32);
            assertThat(me[0]).isGreaterThan(0.01);
            assertThat(me[1])
                    .as(act.name())
                    .isLessThanOrEqualTo(Math.scalb(me[0], -5))
                    .isGreaterThan(0);
        }
        // a transposed left operand and a broadcast batch stay float32, said why
        GraphBuilder b = new GraphBuilder("t");
        Value x = b.input("x", FLOAT32, 2, 8, 4), y = b.input("y", FLOAT32, 1, 8, 6);
        Value z = b.batchMatmul("z", x, b.input("w", FLOAT32, 2, 8, 6), true, false);
        Graph g = b.output(z, b.batchMatmul("u", b.transpose("xt", x, 0, 2, 1), y, false, false))
                .build();
        ToBfloat16.Result r = ToBfloat16.apply(g);
        assertThat(r.converted()).isEmpty();
        assertThat(r.kept().get("z")).contains("left operand is transposed");
        assertThat(r.kept().get("u")).contains("batches differ");
    }

    /**
     * The zoo's ResNet-18 (width 8) and MobileNet-V2 at 32x32 with bfloat16 activations: the only casts left in
     * kernels of their own read a graph input or a value no float32 node reads besides the cast (a pooled vector, a
     * depthwise conv's output), ResNet-18's block outputs no longer among them, and the output stays within 2^-5 of
     * the float32 network's largest output (bfloat16 rounding through a dozen layers), as the float32-activation
     * network's does.
     */
    @Test
    void zooNetworksWithBfloat16ActivationsKeepOnlyTheCastsTheyNeed() {
        for (Graph net : java.util.List.of(
                dev.kiln.models.Models.resnet18(1, 32, 8, 10, 7), dev.kiln.models.Models.mobilenetV2(1, 32, 7))) {
            Graph wide = ToBfloat16.apply(net).graph();
            Graph narrow =
                    ToBfloat16.apply(net, ToBfloat16.Activations.BFLOAT16).graph();
            java.util.List<String> left = TensorCoreNets.castKernels(narrow);
            for (String v : left) {
                boolean input = narrow.inputs().stream().anyMatch(x -> x.name().equals(v));
                assertThat(input || narrow.consumers(v).size() == 1)
                        .as(net.name() + ": '" + v + "' is cast alone and read by float32 nodes too")
                        .isTrue();
            }
            if (net.name().startsWith("resnet"))
                assertThat(left.size())
                        .isLessThan(TensorCoreNets.castKernels(wide).size());
            long[] dims = net.inputs().getFirst().dims();
            try (NodeRunner ref = NodeRunner.interpreter();
                    NDArray in = NDArray.random(FLOAT32, 3, dims)) {
                NDArray y32 = ReferenceExecutor.run(net, ref, in).getFirst();
                for (Graph g : java.util.List.of(wide, narrow)) {
                    NDArray y = ReferenceExecutor.run(g, ref, in).getFirst();
                    double max = 0, err = 0;
                    for (long i = 0; i < y32.numElements(); i++) {
                        max = Math.max(max, Math.abs(y32.getDoubleFlat(i)));
                        err = Math.max(err, Math.abs(y32.getDoubleFlat(i) - y.getDoubleFlat(i)));
                    }
                    assertThat(err).as(net.name()).isLessThanOrEqualTo(Math.scalb(max, -5));
                }
            }
        }
    }
}
