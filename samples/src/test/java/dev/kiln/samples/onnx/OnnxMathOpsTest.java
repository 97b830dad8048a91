package dev.kiln.samples.onnx;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.graph.Graph;
import dev.kiln.ir.DType;
import dev.kiln.onnx.ModelWriter;
import dev.kiln.onnx.proto.Onnx.TensorProto;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Matmuls, elementwise and normalisation operators, each checked against ONNX Runtime (rtol 1e-4, atol 1e-5). */
class OnnxMathOpsTest {
    static final double RTOL = 1e-4, ATOL = 1e-5;

    static void check(ModelWriter m) {
        OnnxCheck.check(m, Map.of("batch", 3L), RTOL, ATOL, true);
    }

    @Test
    void gemmVariants() {
        ModelWriter m = new ModelWriter("gemm", 13).input("a", "batch", 5L).input("at", 5L, "batch");
        m.node(
                "Gemm",
                new String[] {"a", m.weight("w", 1, 0.5, 5, 4), m.weight("c", 2, 0.5, 4)},
                "y",
                "alpha",
                0.5,
                "beta",
                2.0);
        m.node(
                "Gemm",
                new String[] {"at", m.weight("wt", 3, 0.5, 4, 5), m.weight("c2", 4, 0.5, 3, 4)},
                "z",
                "transA",
                1L,
                "transB",
                1L);
        m.node("Gemm", new String[] {"a", m.node("Relu", new String[] {"at"}, "b")}, "p", "alpha", 2.0);
        check(m.output("y").output("z").output("p"));
    }

    @Test
    void matmulShapes() {
        ModelWriter m =
                new ModelWriter("matmul", 17).input("x", "batch", 4L, 6L).input("y", "batch", 2L, 6L, 4L);
        m.node("MatMul", new String[] {"x", m.weight("w", 1, 0.5, 6, 7)}, "xw"); // constant right operand: dense
        String q = m.node("Reshape", new String[] {"x", m.longs("s", 0, 2, 2, 6)}, "q");
        m.node("MatMul", new String[] {q, "y"}, "qy"); // computed x computed, batched
        m.node(
                "MatMul",
                new String[] {"x", m.node("Sigmoid", new String[] {m.weight("k", 2, 1, 6, 3)}, "k2")},
                "xk"); // computed 2-D right
        check(m.output("xw").output("qy").output("xk"));
    }

    @Test
    void unaryActivations() {
        ModelWriter m = new ModelWriter("unary", 20).input("x", "batch", 8L);
        String x3 = m.node("Mul", new String[] {"x", m.floats("three", new float[] {3f})}, "x3");
        for (String op : new String[] {"Relu", "Sigmoid", "Tanh", "Erf"})
            m.output(m.node(op, new String[] {x3}, op.toLowerCase()));
        m.output(m.node("Gelu", new String[] {x3}, "gelu"));
        m.output(m.node("Gelu", new String[] {x3}, "gelu_tanh", "approximate", "tanh"));
        m.output(m.node(
                "Sqrt",
                new String[] {m.node("Add", new String[] {x3, m.floats("four", new float[] {4f})}, "pos")},
                "sqrt"));
        m.output(m.node("Clip", new String[] {x3, m.floats("lo", new float[] {-1f})}, "clip_lo"));
        check(m);
    }

    @Test
    void binaryBroadcasting() {
        ModelWriter m =
                new ModelWriter("binary", 13).input("a", "batch", 1L, 4L).input("b", 5L, 1L);
        String pos = m.node(
                "Add",
                new String[] {m.node("Sigmoid", new String[] {"a"}, "sa"), m.floats("eps", new float[] {0.5f})},
                "pa");
        m.output(m.node("Add", new String[] {"a", "b"}, "add"));
        m.output(m.node("Sub", new String[] {"b", "a"}, "sub"));
        m.output(m.node("Mul", new String[] {"a", m.weight("w", 1, 1, 4)}, "mul"));
        m.output(m.node("Div", new String[] {"b", pos}, "div"));
        m.output(m.node("Pow", new String[] {pos, m.floats("e", new float[] {1.7f})}, "pow"));
        m.output(m.node("Pow", new String[] {"a", m.floats("two", new float[] {2f})}, "square"));
        m.output(m.node("Max", new String[] {"a", "b"}, "max"));
        m.output(m.node("Min", new String[] {"a", "b"}, "min"));
        check(m);
    }

    @Test
    void softmaxReduceMeanAndLayerNorm() {
        ModelWriter m = new ModelWriter("norms", 17).input("x", "batch", 4L, 6L);
        m.output(m.node("Softmax", new String[] {"x"}, "sm"));
        m.output(m.node("Softmax", new String[] {"x"}, "sm1", "axis", 1L));
        m.output(m.node("ReduceMean", new String[] {"x"}, "rm", "axes", new long[] {1}, "keepdims", 0L));
        m.output(m.node("ReduceMean", new String[] {"x"}, "rm_all"));
        m.output(m.node(
                "LayerNormalization",
                new String[] {"x", m.uniform("g", 1, 0.5, 1.5, 6), m.weight("b", 2, 0.3, 6)},
                "ln",
                "epsilon",
                1e-5));
        m.output(m.node(
                "LayerNormalization", new String[] {"x", m.uniform("g2", 3, 0.5, 1.5, 4, 6)}, "ln2", "axis", 1L));
        check(m);
    }

    @Test
    void comparisonsAndLogicGiveBool() {
        ModelWriter m = new ModelWriter("logic", 17).input("x", "batch", 6L);
        String y = m.weight("y", 1, 1, 6);
        String xi = m.node(
                "Cast",
                new String[] {m.node("Mul", new String[] {"x", m.floats("three", new float[] {3f})}, "x3")},
                "xi",
                "to",
                (long) TensorProto.DataType.INT32_VALUE);
        String k = m.ints("k", DType.INT32, new long[] {-2, -1, 0, 0, 1, 2}, 6);
        String lt = m.node("Less", new String[] {"x", y}, "lt");
        String eq = m.node("Equal", new String[] {xi, k}, "eq");
        String gt = m.node("Greater", new String[] {xi, k}, "gt");
        m.output(lt, DType.BOOL).output(eq, DType.BOOL).output(gt, DType.BOOL);
        m.output(m.node("LessOrEqual", new String[] {xi, k}, "le"), DType.BOOL);
        m.output(m.node("GreaterOrEqual", new String[] {"x", y}, "ge"), DType.BOOL);
        m.output(m.node("And", new String[] {lt, gt}, "and"), DType.BOOL);
        m.output(m.node("Or", new String[] {lt, eq}, "or"), DType.BOOL);
        m.output(m.node("Xor", new String[] {lt, gt}, "xor"), DType.BOOL);
        m.output(m.node("Not", new String[] {eq}, "not"), DType.BOOL);
        m.output(m.node("Equal", new String[] {lt, gt}, "same"), DType.BOOL); // Equal on bool
        m.output(m.node("Where", new String[] {lt, "x", y}, "min")); // a computed condition feeds a select
        String folded = m.node(
                "Greater",
                new String[] {
                    m.floats("c1", new float[] {1f, 5f, 0f, 3f, -1f, 9f}, 6), m.floats("c2", new float[] {2f}, 1)
                },
                "folded");
        m.output(m.node("Where", new String[] {folded, m.weight("p", 2, 1, 6), "x"}, "picked"));
        Graph g = OnnxCheck.check(m, Map.of("batch", 3L), 0, 0, true);
        assertThat(g.nodes().stream().map(n -> n.op().kind()))
                .contains("less", "equal", "greater", "and", "or", "xor", "not")
                .filteredOn("greater"::equals)
                .as("Greater of two constants folds at import")
                .hasSize(1);
    }
}
