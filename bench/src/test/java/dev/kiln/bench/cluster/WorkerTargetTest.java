package dev.kiln.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.cuda.CudaDevice;
import dev.kiln.cuda.CudaDriver;
import dev.kiln.ir.KilnException;
import dev.kiln.target.Target;
import org.junit.jupiter.api.Test;

class WorkerTargetTest {
    @Test
    void aCpuWorkerAdvertisesThisMachinesCpuAndASimulatedOneItsGivenTarget() {
        assertThat(WorkerTarget.of(null, false).target()).isEqualTo(Target.cpu().toString());
        assertThat(WorkerTarget.of(null, true).target()).isEqualTo("simulated");
        assertThat(WorkerTarget.of("cuda", true).target()).isEqualTo("simulated:cuda");
    }

    @Test
    void aCudaWorkerRefusesToStartWithoutTheDriverSayingWhatIsMissing() {
        CudaDriver.Status s = CudaDriver.status();
        assumeFalse(s.available(), "this machine has a CUDA driver and a GPU: " + s);
        assertThatThrownBy(() -> WorkerTarget.of("cuda", false))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("target 'cuda'")
                .hasMessageContaining("cannot measure CUDA programs")
                .hasMessageContaining(s.reason())
                .hasMessageContaining("libcuda.so.1");
        String sm80 = Target.parse("cuda -arch=sm_80 -max-threads-per-block=1024 -shared-memory-per-block=49152 "
                        + "-warp-size=32")
                .toString();
        assertThatThrownBy(() -> WorkerTarget.of(sm80, false))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("cannot measure CUDA programs");
    }

    @Test
    void aCudaWorkerAdvertisesItsGpusArchitecture() {
        CudaDriver.Status s = CudaDriver.status();
        assumeTrue(s.available(), "needs a CUDA GPU: " + s);
        WorkerTarget w = WorkerTarget.of("cuda", false);
        assertThat(w.target()).isEqualTo(CudaDevice.first().target().toString());
        assertThat(w.target())
                .contains("-arch=sm_" + CudaDevice.first().target().computeCapability());
        assertThat(w.description()).contains(CudaDevice.first().name());
    }
}
