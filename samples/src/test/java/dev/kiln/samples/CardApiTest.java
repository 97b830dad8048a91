package dev.kiln.samples;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.Kiln;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.jit.LlvmKernel;
import dev.kiln.jit.jvm.JvmKernel;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.Tensor;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The card's API on a CPU: the target constants, and {@code Kiln.compile(C, target)} for the LLVM
 * and JVM backends, checked against plain Java loops on seeded random inputs (rtol = atol = 1e-4).
 */
class CardApiTest {
    private static Tensor matmul(int m, int n, int k) {
        Tensor a = placeholder("A", FLOAT32, m, k);
        Tensor b = placeholder("B", FLOAT32, k, n);
        IterVar r = reduceAxis(k, "r");
        return compute("C", shape(m, n), (i, j) -> sum(r, a.at(i, r).mul(b.at(r, j))));
    }

    @Test
    void theTargetConstantsAreTheFactoriesValues() {
        assertThat(Target.CPU).isEqualTo(Target.cpu());
        assertThat(Target.JVM).isEqualTo(Target.jvm());
        assertThat(Target.CUDA).isEqualTo(Target.cuda());
        assertThat(Target.parse(Target.CPU.toString())).isEqualTo(Target.CPU);
    }

    @Test
    void kilnCompileGivesAKernelThatComputesTheMatmulOnEveryCpuBackend() {
        long seed = new SplittableRandom().nextLong();
        int m = 13, n = 9, k = 21;
        Tensor c = matmul(m, n, k);
        try (CompiledKernel llvm = Kiln.compile(c, Target.CPU);
                CompiledKernel jvm = Kiln.compile(c, Target.JVM);
                NDArray a = NDArray.random(FLOAT32, seed, m, k);
                NDArray b = NDArray.random(FLOAT32, seed + 1, k, n);
                NDArray expected = NDArray.allocate(FLOAT32, m, n)) {
            assertThat(llvm).isInstanceOf(LlvmKernel.class);
            assertThat(jvm).isInstanceOf(JvmKernel.class);
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int r = 0; r < k; r++) s += a.getDouble(i, r) * b.getDouble(r, j);
                    expected.setDouble(s, i, j);
                }
            }
            for (CompiledKernel kernel : new CompiledKernel[] {llvm, jvm}) {
                try (NDArray out = NDArray.allocate(FLOAT32, m, n)) {
                    kernel.call(a, b, out);
                    out.assertClose(expected, 1e-4, 1e-4);
                }
            }
        }
    }

    @Test
    void kilnCompileNamesWhatIsMissing() {
        assertThatThrownBy(() -> Kiln.compile((Tensor) null, Target.CPU))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("output tensor is null");
        assertThatThrownBy(() -> Kiln.compile(matmul(2, 2, 2), null))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("target is null");
    }
}
