package dev.kiln.samples;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;

import dev.kiln.ir.IterVar;
import dev.kiln.nn.Conv;
import dev.kiln.te.Tensor;
import java.util.List;

/** The main job's workloads, each with an independent plain-Java reference. */
final class Workloads {
    private Workloads() {}

    /** C[i, j] = sum_k A[i, k] * B[k, j], written with the DSL as a user would. */
    static Workload matmul(int m, int n, int k) {
        Tensor a = placeholder("A", FLOAT32, m, k);
        Tensor b = placeholder("B", FLOAT32, k, n);
        IterVar r = reduceAxis(k, "k");
        Tensor c = compute("C", shape(m, n), (i, j) -> sum(r, a.at(i, r).mul(b.at(r, j))));
        return new Workload("matmul " + m + "x" + n + "x" + k, List.of(a, b), c, in -> {
            float[] x = in.get(0), y = in.get(1), out = new float[m * n];
            for (int i = 0; i < m; i++) {
                for (int kk = 0; kk < k; kk++) {
                    float xv = x[i * k + kk];
                    for (int j = 0; j < n; j++) out[i * n + j] += xv * y[kk * n + j];
                }
            }
            return out;
        });
    }

    /**
     * A ResNet conv2d layer in NHWC (data [N, H, W, CI], weights HWIO [K, K, CI, CO]) with a
     * symmetric padding, built by the operator library.
     */
    static Workload conv2dNhwc(int n, int h, int w, int ci, int co, int kk, int stride, int pad) {
        Tensor data = placeholder("data", FLOAT32, n, h, w, ci);
        Tensor weight = placeholder("weight", FLOAT32, kk, kk, ci, co);
        Tensor out = Conv.conv2dNhwc(data, weight, stride, pad);
        int oh = (h + 2 * pad - kk) / stride + 1, ow = (w + 2 * pad - kk) / stride + 1;
        String name = "conv2d NHWC " + h + "x" + w + "x" + ci + "->" + co + " k" + kk + " s" + stride + " p" + pad;
        return new Workload(name, List.of(data, weight), out, in -> {
            float[] x = in.get(0), wt = in.get(1), y = new float[n * oh * ow * co];
            for (int b = 0; b < n; b++)
                for (int oy = 0; oy < oh; oy++)
                    for (int ox = 0; ox < ow; ox++)
                        for (int ky = 0; ky < kk; ky++)
                            for (int kx = 0; kx < kk; kx++) {
                                int iy = oy * stride + ky - pad, ix = ox * stride + kx - pad;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                for (int c = 0; c < ci; c++) {
                                    float xv = x[((b * h + iy) * w + ix) * ci + c];
                                    int wBase = ((ky * kk + kx) * ci + c) * co;
                                    int yBase = ((b * oh + oy) * ow + ox) * co;
                                    for (int o = 0; o < co; o++) y[yBase + o] += xv * wt[wBase + o];
                                }
                            }
            return y;
        });
    }
}
