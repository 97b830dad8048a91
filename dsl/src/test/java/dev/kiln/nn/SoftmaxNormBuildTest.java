package dev.kiln.nn;

import static dev.kiln.nn.Errors.assertMessage;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kiln.ir.DType;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;

class SoftmaxNormBuildTest {
    private static Tensor ph(String n, long... s) {
        return Te.placeholder(n, DType.FLOAT32, s);
    }

    private static List<String> computeNames(Tensor out) {
        return ComputeDAG.of(out).ops().stream()
                .filter(o -> o instanceof ComputeOp)
                .map(Operation::name)
                .toList();
    }

    @Test
    void softmaxIsFourClassicStages() {
        Tensor s = Softmax.softmax(ph("x", 6, 9));
        assertEquals(Shape.of(6, 9), s.shape());
        assertEquals(List.of("softmax_max", "softmax_exp", "softmax_sum", "softmax"), computeNames(s));
        ComputeDAG dag = ComputeDAG.of(s);
        assertEquals(true, ((ComputeOp) dag.ops().get(1)).isReduction());
        assertEquals(Shape.of(6), dag.ops().get(1).output(0).shape());
        Tensor s0 = Softmax.softmax(ph("x", 6, 9, 4), 1);
        assertEquals(Shape.of(6, 4), ComputeDAG.of(s0).ops().get(1).output(0).shape());
        assertEquals(
                List.of("log_softmax_max", "log_softmax_sum", "log_softmax"),
                computeNames(Softmax.logSoftmax(ph("x", 6, 9))));
    }

    @Test
    void softmaxErrors() {
        assertMessage(() -> Softmax.softmax(ph("x", 6, 9), 2), "softmax", "axis 2", "'x' [6, 9]", "rank 2");
        assertMessage(() -> Softmax.softmax(ph("x", 6, 9), -3), "axis -3", "'x'");
        assertMessage(() -> Softmax.logSoftmax(Te.placeholder("q", DType.INT32, 4)), "log_softmax", "'q'", "int32");
    }

    @Test
    void batchNormShapesAndErrors() {
        Tensor x = ph("x", 2, 3, 4, 5);
        Tensor c3 = ph("mean", 3);
        Tensor out = Norm.batchNormNchw(x, c3, ph("var", 3), ph("gamma", 3), ph("beta", 3), 1e-5);
        assertEquals(x.shape(), out.shape());
        assertEquals("batch_norm", out.name());
        Tensor c5 = ph("mean", 5);
        assertEquals(
                x.shape(),
                Norm.batchNormNhwc(x, c5, ph("v", 5), ph("g", 5), ph("b", 5), 1e-5)
                        .shape());
        assertMessage(
                () -> Norm.batchNormNchw(x, ph("m", 3), ph("v", 4), ph("g", 3), ph("b", 3), 1e-5),
                "batch_norm",
                "var tensor 'v' [4]",
                "[3]",
                "axis 1",
                "'x'");
        assertMessage(
                () -> Norm.batchNormNchw(
                        x, ph("m", 3), ph("v", 3), ph("g", 3), Te.placeholder("b", DType.FLOAT64, 3), 1e-5),
                "'b'",
                "float64",
                "'x'");
        assertMessage(
                () -> Norm.batchNormNchw(ph("x", 3, 4, 5), ph("m", 3), ph("v", 3), ph("g", 3), ph("b", 3), 1e-5),
                "'x'",
                "rank 3",
                "4");
        assertMessage(() -> Norm.batchNorm(x, 4, c3, c3, c3, c3, 1e-5), "axis 4", "'x'");
        assertMessage(() -> Norm.batchNorm(x, 1, c3, c3, c3, c3, -1), "epsilon", "'x'");
    }

    @Test
    void layerNormStagesAndErrors() {
        Tensor x = ph("x", 2, 3, 4);
        Tensor out = Norm.layerNorm(x, ph("g", 3, 4), ph("b", 3, 4), 2, 1e-5);
        assertEquals(x.shape(), out.shape());
        assertEquals(List.of("layer_norm_mean", "layer_norm_var", "layer_norm"), computeNames(out));
        assertEquals(
                Shape.of(2), ComputeDAG.of(out).intermediates().get(0).output(0).shape());
        assertMessage(
                () -> Norm.layerNorm(x, ph("g", 4), ph("b", 3, 4), 2, 1e-5),
                "layer_norm",
                "gamma tensor 'g' [4]",
                "[3, 4]",
                "'x'");
        assertMessage(() -> Norm.layerNorm(x, ph("g", 4), ph("b", 4), 0, 1e-5), "last 0 axes", "'x'");
        assertMessage(() -> Norm.layerNorm(x, ph("g", 4), ph("b", 4), 4, 1e-5), "last 4 axes", "rank 3");
    }
}
