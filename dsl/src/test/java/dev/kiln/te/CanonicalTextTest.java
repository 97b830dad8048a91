package dev.kiln.te;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.Elementwise;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Norm;
import dev.kiln.nn.Softmax;
import org.junit.jupiter.api.Test;

/** The one canonical printer behind the workload key and the auto-scheduler's structural key. */
class CanonicalTextTest {
    static ComputeDAG gemm(long n, long m, long k) {
        return ComputeDAG.of(Linalg.matmul(Te.placeholder("a", FLOAT32, n, k), Te.placeholder("b", FLOAT32, k, m)));
    }

    static ComputeDAG convBiasRelu(long h, long c, long k) {
        Tensor x = Te.placeholder("x", FLOAT32, 1, h, h, c);
        Tensor w = Te.placeholder("w", FLOAT32, 3, 3, c, k);
        Tensor bias = Te.placeholder("bias", FLOAT32, k);
        return ComputeDAG.of(Activation.relu(Elementwise.biasAdd(Conv.conv2dNhwc(x, w, 2, 1), bias, 3)));
    }

    static ComputeDAG softmax() {
        return ComputeDAG.of(Softmax.softmax(Te.placeholder("x", FLOAT32, 4, 100)));
    }

    static ComputeDAG layerNorm() {
        Tensor x = Te.placeholder("x", FLOAT32, 2, 8, 64);
        Tensor g = Te.placeholder("gamma", FLOAT32, 64);
        Tensor b = Te.placeholder("beta", FLOAT32, 64);
        return ComputeDAG.of(Norm.layerNorm(x, g, b, 1, 1e-5));
    }

    /**
     * Tuning logs on disk are keyed by these workload keys (and transfer seeds by the structure texts): they must not
     * change. The expected strings were computed once by the code before the two printers became one (main at
     * 1c2434f: {@code WorkloadKey} and the auto-scheduler's {@code StructureKey.canonical}), not by this code.
     */
    @Test
    void keysAreTheOnesLogsOnDiskWereWrittenWith() {
        ComputeDAG[] dags = {gemm(64, 48, 32), convBiasRelu(14, 8, 16), softmax(), layerNorm()};
        String[] workloadKeys = {
            "kiln-d94fa913847ad7246f48f5f78fe18e23",
            "kiln-5ca83c1e83c871b8099dde9092387057",
            "kiln-2f4141d5fdf4bd1152e458b35285c848",
            "kiln-51f59b901c05c06660165555f27e7880"
        };
        String[] structureTexts = {
            "4eed92150dbce26f973e58723b73f393",
            "69990d3cc2bdd3254c089fa85d8adf58",
            "22b29451da133094d4005e791c3cc991",
            "e71ff6066baec5b40dbe4b688b7926c1"
        };
        for (int i = 0; i < dags.length; i++) {
            assertThat(dags[i].workloadKey()).as("workload key %d", i).isEqualTo(workloadKeys[i]);
            assertThat(CanonicalText.digest("", CanonicalText.of(dags[i], CanonicalText.Mode.STRUCTURE)))
                    .as("structure text %d", i)
                    .isEqualTo(structureTexts[i]);
        }
    }

    @Test
    void structureTextAbstractsShapesTheExactTextKeepsThem() {
        ComputeDAG a = convBiasRelu(14, 8, 16);
        ComputeDAG b = convBiasRelu(28, 4, 32);
        assertThat(CanonicalText.of(a, CanonicalText.Mode.EXACT))
                .isNotEqualTo(CanonicalText.of(b, CanonicalText.Mode.EXACT))
                .contains("P " + FLOAT32 + "[")
                .contains("combiner");
        String structure = CanonicalText.of(a, CanonicalText.Mode.STRUCTURE);
        assertThat(structure)
                .isEqualTo(CanonicalText.of(b, CanonicalText.Mode.STRUCTURE))
                .contains(" rank 4")
                .contains("(#)")
                .doesNotContain("combiner");
        assertThat(structure).isNotEqualTo(CanonicalText.of(gemm(14, 8, 16), CanonicalText.Mode.STRUCTURE));
        // names do not matter: a GEMM of other tensor names has the same key
        Tensor p = Te.placeholder("P", FLOAT32, 64, 32);
        Tensor q = Te.placeholder("Q", FLOAT32, 32, 48);
        assertThat(ComputeDAG.of(Linalg.matmul(p, q)).workloadKey())
                .isEqualTo(gemm(64, 48, 32).workloadKey());
    }
}
