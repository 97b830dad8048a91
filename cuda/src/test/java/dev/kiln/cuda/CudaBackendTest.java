package dev.kiln.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.cuda.compile.Nvcc;
import dev.kiln.cuda.compile.Nvrtc;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.SimpleGpuSchedule;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import org.junit.jupiter.api.Test;

/**
 * The CUDA backend as the Backend SPI sees it, on any machine: it is found for CUDA targets and
 * only for them, compiles to CUDA C and PTX without a GPU, checks arguments before touching the
 * driver, and, where there is no driver, fails a call with a message that says so.
 */
class CudaBackendTest {
    private static PrimFunc matmul() {
        OpLibrary.Case c = OpLibrary.all().getFirst();
        return GpuTesting.lower("backend_matmul", SimpleGpuSchedule.of(c.dag(), 32));
    }

    private static void assumeCompiler() {
        assumeTrue(
                Nvrtc.availability().available() || Nvcc.find().isPresent(),
                "no CUDA compiler here: " + Nvrtc.availability() + "; nvcc not found on PATH");
    }

    @Test
    void theServiceLoaderFindsTheCudaBackendForCudaTargetsOnly() {
        Backend b = Backend.forTarget(Target.cuda());
        assertThat(b).isInstanceOf(CudaBackend.class);
        assertThat(b.name()).isEqualTo("cuda");
        assertThat(b.supports(Target.cuda().withFastMath(true))).isTrue();
        assertThat(b.supports(Target.cpu())).isFalse();
        assertThrows(KilnException.class, () -> new CudaBackend().compile(matmul(), Target.cpu()));
    }

    @Test
    void compilesToCudaCAndPtxWithoutAGpu() {
        assumeCompiler();
        try (CudaKernel k = new CudaBackend().compile(matmul(), Target.cuda())) {
            assertThat(k.source()).contains("extern \"C\" __global__").contains("backend_matmul_kernel0");
            assertThat(k.ptx()).contains(".entry backend_matmul_kernel0(").contains(".target sm_90");
            assertThat(k.target()).isEqualTo(Target.cuda());
            assertThat(k.launches()).hasSize(1);
        }
        CudaTarget fast = Target.cuda().withFastMath(true);
        try (CompiledKernel k = Backend.forTarget(fast).compile(matmul(), fast)) {
            assertThat(((CudaKernel) k).module().options().fastMath()).isTrue();
        }
    }

    @Test
    void argumentsAreCheckedBeforeTheDriverIsTouched() {
        assumeCompiler();
        try (CudaKernel k = new CudaBackend().compile(matmul(), Target.cuda());
                NDArray a = NDArray.allocate(DType.FLOAT32, 7, 5);
                NDArray b = NDArray.allocate(DType.FLOAT64, 5, 9);
                NDArray c = NDArray.allocate(DType.FLOAT32, 7, 9)) {
            KilnException e = assertThrows(KilnException.class, () -> k.call(a, b, c));
            assertThat(e.getMessage()).contains("argument 1 ('B')").contains("expected dtype float32 but got float64");
            KilnException n = assertThrows(KilnException.class, () -> k.call(a, c));
            assertThat(n.getMessage()).contains("takes 3 argument(s)");
        }
    }

    @Test
    void withoutADriverACallSaysThereIsNone() {
        CudaDriver.Status s = CudaDriver.status();
        assumeFalse(
                s.available(), "this machine has a CUDA driver and a device (" + s + "): the device tests cover calls");
        assertThat(s.reason()).contains(CudaDriver.NO_DRIVER);
        System.out.println("CUDA driver probe: " + s);
        assumeCompiler();
        try (CudaKernel k = new CudaBackend().compile(matmul(), Target.cuda());
                NDArray a = NDArray.random(DType.FLOAT32, 1, 7, 5);
                NDArray b = NDArray.random(DType.FLOAT32, 2, 5, 9);
                NDArray c = NDArray.allocate(DType.FLOAT32, 7, 9)) {
            KilnException e = assertThrows(KilnException.class, () -> k.call(a, b, c));
            assertThat(e.getMessage()).contains("no CUDA driver (libcuda.so.1) on this machine");
        }
        KilnException m =
                assertThrows(KilnException.class, () -> CudaMeasurer.start(Target.cuda(), MeasureOptions.defaults()));
        assertThat(m.getMessage()).contains("no CUDA driver (libcuda.so.1) on this machine");
        assertThrows(KilnException.class, CudaBackend::deviceTarget);
    }
}
