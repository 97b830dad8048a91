package dev.kiln.autoschedule;

import static dev.kiln.ir.DType.FLOAT32;

import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Norm;
import dev.kiln.nn.Pool;
import dev.kiln.nn.Reduction;
import dev.kiln.nn.Softmax;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;

/**
 * The computations of Ansor's sketch-generation tests (tests/python/unittest/
 * test_auto_scheduler_sketch_generation.py and its common workloads), built with Kiln's
 * operator library, plus small shapes for numeric checks.
 */
public final class Workloads {
    private Workloads() {}

    /** The hardware of Ansor's sketch tests: 4 cores (they assume 4 to trigger every rule). */
    public static final HardwareParams FOUR_CORES = HardwareParams.cpu(4, 32, 64);

    public static SearchTask task(ComputeDAG dag) {
        return SearchTask.cpu(dag, FOUR_CORES);
    }

    /** {@code C[i, j] = sum_k A[i, k] * B[k, j]}, A [n, k], B [k, m]. */
    public static ComputeDAG matmul(long n, long m, long k) {
        Tensor a = Te.placeholder("A", FLOAT32, n, k);
        Tensor b = Te.placeholder("B", FLOAT32, k, m);
        return ComputeDAG.of(Linalg.matmul(a, b));
    }

    /** {@code E = (A B) C}, all n × n. */
    public static ComputeDAG doubleMatmul(long n) {
        Tensor a = Te.placeholder("A", FLOAT32, n, n);
        Tensor b = Te.placeholder("B", FLOAT32, n, n);
        Tensor c = Te.placeholder("C", FLOAT32, n, n);
        Tensor d = Te.compute(
                "D", Te.shape(n, n), (i, j) -> Te.sum(n, k -> a.at(i, k).mul(b.at(k, j))));
        Tensor e = Te.compute(
                "E", Te.shape(n, n), (i, j) -> Te.sum(n, k -> d.at(i, k).mul(c.at(k, j))));
        return ComputeDAG.of(e);
    }

    /** conv2d NCHW (padding {@code pad}, stride {@code stride}), then bias add, batch-norm scale and offset, relu. */
    public static ComputeDAG conv2dBnRelu(
            long n, long h, long w, long ci, long co, long kernel, long stride, long pad) {
        Tensor data = Te.placeholder("Data", FLOAT32, n, ci, h, w);
        Tensor weight = Te.placeholder("Kernel", FLOAT32, co, ci, kernel, kernel);
        Tensor bias = Te.placeholder("Bias", FLOAT32, co, 1, 1);
        Tensor scale = Te.placeholder("Bn_scale", FLOAT32, co, 1, 1);
        Tensor offset = Te.placeholder("Bn_offset", FLOAT32, co, 1, 1);
        Tensor conv = Conv.conv2dNchw(data, weight, stride, pad);
        Tensor b = Te.compute(
                "Bias_add", conv.shape(), (i, j, k, l) -> conv.at(i, j, k, l).add(bias.at(j, Te.i32(0), Te.i32(0))));
        Tensor m = Te.compute(
                "Bn_mul", conv.shape(), (i, j, k, l) -> b.at(i, j, k, l).mul(scale.at(j, Te.i32(0), Te.i32(0))));
        Tensor o = Te.compute(
                "Bn_add", conv.shape(), (i, j, k, l) -> m.at(i, j, k, l).add(offset.at(j, Te.i32(0), Te.i32(0))));
        return ComputeDAG.of(Activation.relu(o));
    }

    /** 2×2 max pooling, stride 1, NCHW, with padding {@code pad}. */
    public static ComputeDAG maxPool2d(long n, long h, long w, long c, long pad) {
        Tensor data = Te.placeholder("Data", FLOAT32, n, c, h, w);
        return ComputeDAG.of(Pool.maxPool2dNchw(data, 2, 1, pad));
    }

    /** min over the last axis of an n × m tensor. */
    public static ComputeDAG minNm(long n, long m) {
        return ComputeDAG.of(Reduction.min(Te.placeholder("A", FLOAT32, n, m), -1));
    }

    /** softmax over the last axis of an n × m tensor. */
    public static ComputeDAG softmaxNm(long n, long m) {
        return ComputeDAG.of(Softmax.softmax(Te.placeholder("A", FLOAT32, n, m), 1));
    }

    /** softmax over the last axis of an a × b × c × d tensor. */
    public static ComputeDAG softmaxAbcd(long a, long b, long c, long d) {
        return ComputeDAG.of(Softmax.softmax(Te.placeholder("A", FLOAT32, a, b, c, d), -1));
    }

    /**
     * Attention scores as the operator suite's TBS builds them (Ansor's transpose_batch_matmul_softmax): softmax
     * over j of {@code sum_d query[b, i, h, d] * value[b, j, h, d]}, through the copies {@code query_T} [b, h, l, d]
     * and {@code value_T} [b, h, d, l].
     */
    public static ComputeDAG attention(long b, long l, long h, long d) {
        Tensor q = Te.placeholder("query", FLOAT32, b, l, h, d);
        Tensor v = Te.placeholder("value", FLOAT32, b, l, h, d);
        Tensor qt = Te.compute("query_T", Te.shape(b, h, l, d), (bb, hh, ll, dd) -> q.at(bb, ll, hh, dd));
        Tensor vt = Te.compute("value_T", Te.shape(b, h, d, l), (bb, hh, dd, ll) -> v.at(bb, ll, hh, dd));
        Tensor scores = Te.compute(
                "scores",
                Te.shape(b, h, l, l),
                (bb, hh, i, j) -> Te.sum(d, k -> qt.at(bb, hh, i, k).mul(vt.at(bb, hh, k, j))));
        return ComputeDAG.of(Softmax.softmax(scores, 3));
    }

    /** conv2d NHWC with padding 1 followed by relu. */
    public static ComputeDAG conv2dNhwcRelu(long n, long h, long w, long ci, long co, long kernel) {
        Tensor data = Te.placeholder("data", FLOAT32, n, h, w, ci);
        Tensor weight = Te.placeholder("weight", FLOAT32, kernel, kernel, ci, co);
        return ComputeDAG.of(Activation.relu(Conv.conv2dNhwc(data, weight, 1, 1)));
    }

    /** layer norm over the last axis of an n × c tensor. */
    public static ComputeDAG layerNorm(long n, long c) {
        Tensor x = Te.placeholder("x", FLOAT32, n, c);
        return ComputeDAG.of(
                Norm.layerNorm(x, Te.placeholder("gamma", FLOAT32, c), Te.placeholder("beta", FLOAT32, c), 1, 1e-5));
    }
}
