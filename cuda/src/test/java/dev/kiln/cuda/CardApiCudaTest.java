package dev.kiln.cuda;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.Kiln;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.cuda.compile.CudaCompiler;
import dev.kiln.cuda.compile.Nvcc;
import dev.kiln.cuda.compile.Nvrtc;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import org.junit.jupiter.api.Test;

/**
 * The card's calls on CUDA: {@code AutoSchedule.tune(C, Target.CUDA)} with every option defaulted
 * says plainly that there is no driver (no silent fallback to another device), while
 * {@code Kiln.compile(C, Target.CUDA)} still compiles CUDA C where NVRTC or nvcc is found, and the
 * program it compiled computes what the default lowering computes.
 */
class CardApiCudaTest {
    private static Tensor matmul(int m, int n, int k) {
        Tensor a = placeholder("A", FLOAT32, m, k);
        Tensor b = placeholder("B", FLOAT32, k, n);
        IterVar r = reduceAxis(k, "r");
        return compute("C", shape(m, n), (i, j) -> sum(r, a.at(i, r).mul(b.at(r, j))));
    }

    @Test
    void tuningForCudaWithDefaultsAndNoDriverSaysSo() {
        assumeFalse(CudaDriver.status().available(), "a CUDA driver is present: the device tests tune for real");
        Tensor c = matmul(16, 16, 16);
        assertThatThrownBy(() -> AutoSchedule.tune(c, Target.CUDA))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("cannot tune workload")
                .hasMessageContaining("cuda -arch=sm_90")
                .hasMessageContaining(CudaDriver.NO_DRIVER)
                .hasMessageContaining("Kiln.compile");
    }

    @Test
    void kilnCompilesAnUntunedComputationToCudaC() {
        assumeTrue(
                Nvrtc.availability().available() || Nvcc.find().isPresent(),
                "neither NVRTC nor nvcc here: " + CudaCompiler.describe());
        Tensor c = matmul(40, 12, 7);
        ComputeDAG dag = ComputeDAG.of(c);
        try (CompiledKernel k = Kiln.compile(c, Target.CUDA)) {
            assertThat(k).isInstanceOf(CudaKernel.class);
            assertThat(k.target()).isEqualTo(Target.CUDA);
            assertThat(k.source()).contains("__global__").contains("blockIdx.x").contains("threadIdx.x");
            // the GPU program, run in the interpreter, against the default lowering (rtol = atol = 1e-5)
            assertThat(GpuTesting.compareWithDefault(dag, k.func(), 11, 1e-5)).isNull();
            if (CudaDriver.status().available()) {
                try (NDArray a = NDArray.random(FLOAT32, 1, 40, 7);
                        NDArray b = NDArray.random(FLOAT32, 2, 7, 12);
                        NDArray out = NDArray.allocate(FLOAT32, 40, 12);
                        NDArray ref = NDArray.allocate(FLOAT32, 40, 12)) {
                    k.call(a, b, out);
                    Interpreter.run(k.func(), a, b, ref);
                    out.assertClose(ref, 1e-5, 1e-5);
                }
            } else {
                try (NDArray a = NDArray.random(FLOAT32, 1, 40, 7);
                        NDArray b = NDArray.random(FLOAT32, 2, 7, 12);
                        NDArray out = NDArray.allocate(FLOAT32, 40, 12)) {
                    assertThatThrownBy(() -> k.call(a, b, out))
                            .isInstanceOf(KilnException.class)
                            .hasMessageContaining(CudaDriver.NO_DRIVER);
                }
            }
        }
    }
}
