package dev.kiln.jit.jvm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.Elementwise;
import dev.kiln.nn.Layout;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Norm;
import dev.kiln.nn.Pool;
import dev.kiln.nn.Reduction;
import dev.kiln.nn.Softmax;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The operator library ({@code dev.kiln.nn}) through the JVM backend, on random inputs of odd
 * shapes, twice: with the default lowering (serial loops) and with a simple schedule that makes
 * every stage's outermost loop parallel and its innermost loop vectorized (where legal). Each must
 * agree bit for bit with the interpreter running the same program.
 */
class NnLibraryTest {
    private static final DType F32 = DType.FLOAT32;

    private static Tensor in(String name, long... shape) {
        return Te.placeholder(name, F32, shape);
    }

    private static JvmKernel check(String name, Tensor out, long seed) {
        ComputeDAG dag = ComputeDAG.of(out);
        JvmCheck.exact(LowerDefault.lower(name, dag), seed);
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        for (var op : dag.ops()) {
            if (!(op instanceof ComputeOp)) continue;
            var st = s.stage(op.name());
            List<ScheduleBuilder.Loop> loops = st.loops();
            try {
                st.parallel(loops.get(0));
            } catch (KilnException e) {
                // a reduction loop cannot be parallel (nor a loop whose name is ambiguous be named)
            }
            try {
                st.vectorize(loops.get(loops.size() - 1));
            } catch (KilnException e) {
                // nor vectorized
            }
        }
        return JvmCheck.exact(Lowering.lower(name + "_scheduled", s.build()), seed + 1000);
    }

    @Test
    void activationsAndElementwise() {
        Tensor x = in("x", 3, 17);
        assertThat(check("relu", Activation.relu(x), 1).source()).contains("FloatVector");
        check("leaky_relu", Activation.leakyRelu(x, 0.1), 2);
        check("gelu", Activation.gelu(x), 4);
        check("gelu_tanh", Activation.gelu(x, true), 5);
        check("sigmoid", Activation.sigmoid(x), 6);
        check("tanh", Activation.tanh(x), 7);
        Tensor a = in("a", 4, 1, 7), b = in("b", 5, 1);
        check("add", Elementwise.add(a, b), 11);
        check("divide", Elementwise.divide(a, b), 14);
        check("maximum", Elementwise.maximum(a, b), 15);
        check("bias_add", Elementwise.biasAdd(in("x", 2, 3, 5), in("bias", 3), 1), 17);
    }

    @Test
    void layouts() {
        Tensor x = in("x", 2, 3, 5);
        check("transpose_perm", Layout.transpose(x, 1, 2, 0), 23);
        check("flatten_mid", Layout.flatten(in("y", 2, 3, 4, 5), 1, 2), 25);
    }

    @Test
    void linearAlgebra() {
        check("matmul", Linalg.matmul(in("a", 7, 9), in("b", 9, 5)), 31);
        check("matmul_tt", Linalg.matmul(in("a", 9, 7), in("b", 5, 9), true, true), 32);
        check(
                "matmul_i8",
                Linalg.matmul(
                        Te.placeholder("a", DType.INT8, 6, 11),
                        Te.placeholder("b", DType.INT8, 11, 3),
                        false,
                        false,
                        DType.INT32),
                33);
        check("batch_matmul", Linalg.batchMatmul(in("x", 3, 4, 6), in("y", 3, 6, 5)), 34);
        check("dense", Linalg.dense(in("x", 4, 10), in("w", 3, 10), in("bias", 3)), 36);
        check("norm", Linalg.norm(in("a", 2, 5, 6)), 37);
    }

    @Test
    void normalisationReductionsAndSoftmax() {
        check(
                "batch_norm_nchw",
                Norm.batchNormNchw(
                        in("x", 2, 3, 4, 5), in("mean", 3), in("var", 3), in("gamma", 3), in("beta", 3), 1e-5),
                41);
        check("layer_norm", Norm.layerNorm(in("z", 3, 4, 7), in("gamma", 4, 7), in("beta", 4, 7), 2, 1e-5), 43);
        Tensor x = in("x", 3, 5, 7);
        check("sum", Reduction.sum(x, 1), 51);
        check("max", Reduction.max(x, 2), 53);
        check("mean", Reduction.mean(x, 1, 2), 55);
        check("argmax", Reduction.argmax(x, 1), 56);
        check("softmax", Softmax.softmax(in("x", 4, 13)), 61);
        check("log_softmax", Softmax.logSoftmax(in("x", 3, 11)), 63);
    }

    @Test
    void convolutionAndPooling() {
        check("conv2d", Conv.conv2dNchw(in("x", 1, 3, 7, 6), in("w", 4, 3, 3, 3), 1, 1), 71);
        check("pool", Pool.maxPool2dNchw(in("x", 1, 2, 7, 7), 3, 2, 1), 72);
        check(
                "fp16_matmul",
                Linalg.matmul(Te.placeholder("a", DType.FLOAT16, 5, 6), Te.placeholder("b", DType.FLOAT16, 6, 3)),
                73);
    }
}
