package dev.kiln.jit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.ir.DType;
import dev.kiln.nn.LowPrecision;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.SplittableRandom;

/**
 * The set-up the tests of the CPU tensor intrinsics share ({@link TensorizeJitTest}, {@link TensorizeRowTailTest},
 * {@link AccumulatorResidencyTest}): the packed low-precision dense workload, seeded int8 inputs, the skip on a
 * host without the intrinsic, and the bf16 inputs with the check against their float32 reference.
 */
final class TensorizeFixture {
    static final CpuTarget HOST = LlvmBackend.hostTarget();

    private TensorizeFixture() {}

    /** {@code x (m x k) . w (n x k)^T} with {@code w} packed for the intrinsics. */
    static ComputeDAG packedDense(DType a, DType b, long m, long n, long k) {
        Tensor x = Te.placeholder("x", a, m, k);
        Tensor w = Te.placeholder("w", b, n, k);
        return ComputeDAG.of(LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w)));
    }

    /** Seeded random values over the whole range of an 8-bit type (uint8 or int8). */
    static NDArray full(DType t, long seed, long... shape) {
        NDArray a = NDArray.allocate(t, shape);
        SplittableRandom r = new SplittableRandom(seed);
        for (long i = 0; i < a.numElements(); i++) {
            a.setLongFlat(t == DType.UINT8 ? r.nextInt(256) : r.nextInt(256) - 128, i);
        }
        return a;
    }

    /** Skips the test, naming the missing feature, when the host lacks the intrinsic. */
    static void assumeIntrinsic(String intrinsic) {
        String why = TensorIntrinsics.get(intrinsic).unavailableReason(HOST);
        assumeTrue(why == null, why);
    }

    /** bf16 inputs {@code x} and {@code w} rounded from the seeded float32 ones {@code xf} and {@code wf}. */
    record Bf16Inputs(NDArray xf, NDArray wf, NDArray x, NDArray w) {
        static Bf16Inputs random(long seedX, long seedW, long m, long n, long k) {
            NDArray xf = NDArray.random(DType.FLOAT32, seedX, m, k);
            NDArray wf = NDArray.random(DType.FLOAT32, seedW, n, k);
            return new Bf16Inputs(xf, wf, toBf16(xf), toBf16(wf));
        }

        private static NDArray toBf16(NDArray f) {
            NDArray b = NDArray.allocate(DType.BFLOAT16, f.shape());
            for (long i = 0; i < b.numElements(); i++) b.setDoubleFlat(f.getDoubleFlat(i), i);
            return b;
        }

        /**
         * Checks {@code out (m x n)} against the float32 reference on the unrounded inputs, within the bound bf16's
         * 8-bit significand gives ({@link TensorizeJitTest}: {@code (2u + u^2 + K 2^-24) * sum_k |a_k b_k|}).
         */
        void assertWithinBound(NDArray out, int m, int n, int kk) {
            double u = Math.scalb(1.0, -8);
            double rel = 2 * u + u * u + kk * Math.scalb(1.0, -24);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double ref = 0, mag = 0;
                    for (int q = 0; q < kk; q++) {
                        double p = xf.getDouble(i, q) * wf.getDouble(j, q);
                        ref += p;
                        mag += Math.abs(p);
                    }
                    assertThat(Math.abs(out.getDouble(i, j) - ref))
                            .as("out[%d, %d] = %s, float32 reference %s", i, j, out.getDouble(i, j), ref)
                            .isLessThanOrEqualTo(rel * mag + 1e-30);
                }
        }
    }
}
