package dev.kiln.operators;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.placeholder;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvGemm;
import dev.kiln.nn.ConvParams;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The implicit-GEMM conv ({@link ConvGemm}) against the direct NHWC convolution, both run by the interpreter on seeded
 * random float32 data in [-1, 1): strides, dilations, padding on some sides or none, batch 2, rows and reduction
 * padded (extra rows must come out 0, extra weight rows must add nothing: they hold 1000). Its first N * OH * OW rows
 * are the NHWC output in order; tolerance 1e-5 relative to the largest output (the same products summed in another
 * order).
 */
class ConvGemmTest {

    @ParameterizedTest(name = "n={0} {1}x{2}x{3} -> {4}, {5}x{6} stride {7} dil {8} pad {9},{10},{11},{12} +{13} rows")
    @CsvSource({
        "1, 6, 6, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1, 12",
        "2, 7, 5, 3, 5, 3, 3, 2, 1, 1, 0, 0, 2, 0",
        "1, 9, 9, 4, 6, 1, 1, 1, 1, 0, 0, 0, 0, 5",
        "1, 11, 10, 2, 3, 7, 7, 2, 1, 3, 3, 3, 3, 7",
        "1, 8, 8, 3, 4, 3, 3, 1, 2, 2, 2, 2, 2, 0"
    })
    void matchesTheDirectConvolution(
            int n,
            int h,
            int w,
            int ci,
            int co,
            int kh,
            int kw,
            int stride,
            int dil,
            int pt,
            int pl,
            int pb,
            int pr,
            int extraRows) {
        ConvParams p = ConvParams.of(2, stride, 0).withPadding2d(pt, pb, pl, pr).withDilation(dil, dil);
        Tensor data = placeholder("data", FLOAT32, n, h, w, ci);
        Tensor weight = placeholder("weight", FLOAT32, kh, kw, ci, co);
        Tensor direct = Conv.conv2dNhwc(data, weight, p);
        long m = ConvGemm.pixels(data, kh, kw, p), k = (long) kh * kw * ci, cols = k + 3;
        assertThat(m).isEqualTo(direct.dim(0) * direct.dim(1) * direct.dim(2));
        Tensor wg = placeholder("wg", FLOAT32, cols, co);
        Tensor gemm = ConvGemm.conv2dNhwcGemm(data, wg, kh, kw, p, m + extraRows);
        assertThat(gemm.shape().toArray()).containsExactly(m + extraRows, co);
        List<NDArray> in = OpHarness.randomInputs(List.of(data, weight), 31L * h + kh);
        float[] wf = in.get(1).toFloatArray(); // HWIO: row q = (r * KW + s) * CI + c of the GEMM's weight
        float[] g = new float[(int) (cols * co)];
        System.arraycopy(wf, 0, g, 0, wf.length);
        for (int i = wf.length; i < g.length; i++) g[i] = 1000; // rows past K: multiplied by im2col's zeros
        try (NDArray want = OpHarness.run(direct, List.of(data, weight), in);
                NDArray wa = NDArray.fromFloats(g, cols, co);
                NDArray got = OpHarness.run(gemm, List.of(data, wg), List.of(in.get(0), wa))) {
            float[] a = got.toFloatArray(), b = want.toFloatArray();
            double scale = 0;
            for (float v : b) scale = Math.max(scale, Math.abs(v));
            for (int i = 0; i < b.length; i++) {
                assertThat((double) a[i])
                        .as("output %d", i)
                        .isCloseTo(b[i], org.assertj.core.data.Offset.offset(1e-5 * scale));
            }
            for (int i = b.length; i < a.length; i++)
                assertThat(a[i]).as("padding row element %d", i).isZero();
        } finally {
            in.forEach(NDArray::close);
        }
    }

    @Test
    void badArgumentsAreNamed() {
        Tensor data = placeholder("img", DType.FLOAT16, 1, 6, 6, 8);
        ConvParams p = ConvParams.of(2, 1, 1);
        assertThatThrownBy(() -> ConvGemm.im2colNhwc(data, 3, 3, p, 35, 72))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("rows 35 below the 36 output pixels of tensor 'img'");
        assertThatThrownBy(() -> ConvGemm.im2colNhwc(data, 3, 3, p, 36, 70))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("cols 70 below the 72 taps");
        assertThatThrownBy(() -> ConvGemm.conv2dNhwcGemm(data, placeholder("w", DType.BFLOAT16, 80, 16), 3, 3, p, 48))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("'img' is float16 but weight 'w' is bfloat16");
        assertThatThrownBy(() -> ConvGemm.im2colNhwc(data, 3, 3, p.withGroups(2), 48, 80))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("groups must be 1");
    }
}
