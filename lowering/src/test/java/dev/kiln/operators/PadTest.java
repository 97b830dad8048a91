package dev.kiln.operators;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.ir.DType.INT32;
import static dev.kiln.te.Te.placeholder;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.ir.KilnException;
import dev.kiln.nn.Pad;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Constant padding of any rank against plain loops; exact (rtol 1e-5, atol 1e-5 for float32; copies are exact). */
class PadTest {

    /** Plain reference: out[i] = x[i - before] inside, value outside; shapes row-major. */
    private static float[] reference(float[] x, int[] shape, long[] before, long[] after, float value) {
        int rank = shape.length;
        int[] out = new int[rank];
        int total = 1;
        for (int d = 0; d < rank; d++) {
            out[d] = (int) (shape[d] + before[d] + after[d]);
            total *= out[d];
        }
        float[] r = new float[total];
        int[] idx = new int[rank];
        for (int flat = 0; flat < total; flat++) {
            int rem = flat;
            for (int d = rank - 1; d >= 0; d--) {
                idx[d] = rem % out[d];
                rem /= out[d];
            }
            int src = 0;
            boolean inside = true;
            for (int d = 0; d < rank; d++) {
                int s = idx[d] - (int) before[d];
                inside &= s >= 0 && s < shape[d];
                src = src * shape[d] + s;
            }
            r[flat] = inside ? x[src] : value;
        }
        return r;
    }

    private static void checkPad(int[] shape, long[] before, long[] after, float value, long seed) {
        long[] dims = new long[shape.length];
        for (int d = 0; d < shape.length; d++) dims[d] = shape[d];
        Tensor x = placeholder("x", FLOAT32, dims);
        Tensor out = Pad.pad(x, before, after, value);
        assertThat(out.name()).isEqualTo("pad");
        assertThat(((ComputeOp) out.op()).tag()).isEqualTo("pad");
        ConvTesting.check(out, List.of(x), seed, in -> reference(in[0], shape, before, after, value));
    }

    @Test
    void pad1d() {
        checkPad(new int[] {7}, new long[] {2}, new long[] {3}, -2f, 1);
    }

    @Test
    void pad2dWithZeroOnOneSide() {
        checkPad(new int[] {5, 3}, new long[] {1, 0}, new long[] {2, 3}, 0f, 2);
    }

    @Test
    void pad4dNhwcSpatialOnly() {
        checkPad(new int[] {2, 5, 3, 3}, new long[] {0, 1, 2, 0}, new long[] {0, 2, 1, 0}, 1.5f, 3);
    }

    @Test
    void pad3dEveryAxis() {
        checkPad(new int[] {3, 4, 5}, new long[] {1, 2, 1}, new long[] {1, 0, 2}, 0.25f, 4);
    }

    @Test
    void zeroPaddingIsACopy() {
        checkPad(new int[] {3, 5}, new long[] {0, 0}, new long[] {0, 0}, 9f, 5);
    }

    @Test
    void integerTensorWithIntegerValue() {
        Tensor x = placeholder("x", INT32, 3, 4);
        Tensor out = Pad.pad(x, new long[] {1, 0}, new long[] {0, 2}, 7);
        List<NDArray> in = OpHarness.randomInputs(List.of(x), 6);
        try (NDArray got = OpHarness.run(out, List.of(x), in)) {
            long[] xs = in.get(0).toLongArray();
            long[] g = got.toLongArray();
            assertThat(got.shape()).containsExactly(4, 6);
            for (int i = 0; i < 4; i++) {
                for (int j = 0; j < 6; j++) {
                    long expected = i >= 1 && j < 4 ? xs[(i - 1) * 4 + j] : 7;
                    assertThat(g[i * 6 + j]).as("pad[%d, %d]", i, j).isEqualTo(expected);
                }
            }
        } finally {
            in.forEach(NDArray::close);
        }
    }

    @Test
    void badPaddingNamesTheTensorAndAxis() {
        Tensor x = placeholder("img", FLOAT32, 3, 4);
        String neg = assertThrows(KilnException.class, () -> Pad.pad(x, new long[] {0, -1}, new long[] {0, 0}, 0))
                .getMessage();
        assertThat(neg)
                .contains("'img'")
                .contains("axis 1")
                .contains("non-negative")
                .contains("-1");
        String rank = assertThrows(KilnException.class, () -> Pad.pad(x, new long[] {1}, new long[] {1}, 0))
                .getMessage();
        assertThat(rank).contains("'img'").contains("rank 2");
        Tensor ints = placeholder("idx", INT32, 3);
        String frac = assertThrows(KilnException.class, () -> Pad.pad(ints, new long[] {1}, new long[] {1}, 0.5))
                .getMessage();
        assertThat(frac).contains("0.5").contains("int32");
    }
}
