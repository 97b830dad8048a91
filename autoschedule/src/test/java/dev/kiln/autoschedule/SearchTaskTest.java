package dev.kiln.autoschedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SearchTaskTest {

    @Test
    void thisCpuHasTheMachinesCoresAndAPlausibleVectorWidth() {
        HardwareParams hw = HardwareParams.thisCpu();
        assertThat(hw.numCores()).isEqualTo(Runtime.getRuntime().availableProcessors());
        assertThat(hw.vectorUnitBytes()).isIn(32, 64);
        assertThat(hw.maxInnermostSplitFactor()).isEqualTo(64);
        assertThat(hw.maxVectorizeSize()).isEqualTo(16);
        assertThat(hw.toLogArray()).containsExactly(hw.numCores(), hw.vectorUnitBytes(), 64, 0, 0, 0, 0, 0);
    }

    @Test
    void avx512IsReadFromTheFlagsLine(@TempDir Path dir) throws Exception {
        Path with = dir.resolve("with"), without = dir.resolve("without");
        Files.writeString(with, "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512dq\n");
        Files.writeString(without, "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512_bf16\n");
        assertThat(HardwareParams.hasAvx512f(with)).isTrue();
        assertThat(HardwareParams.hasAvx512f(without)).isFalse();
        assertThat(HardwareParams.hasAvx512f(dir.resolve("missing"))).isFalse();
    }

    @Test
    void cudaParametersAndValidation() {
        HardwareParams gpu = HardwareParams.cuda(49152, 2147483647, 1024, 8, 32);
        assertThat(gpu.toLogArray()).containsExactly(1, 16, 64, 49152, 2147483647, 1024, 8, 32);
        assertThatThrownBy(() -> HardwareParams.cpu(0, 32, 64))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("numCores");
        assertThatThrownBy(() -> HardwareParams.cuda(0, 0, 0, 8, 32))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("maxThreadsPerBlock");
    }

    @Test
    void aTaskIsKeyedByItsWorkloadAndHoldsItsTypedTarget() {
        var dag = Workloads.matmul(4, 4, 4);
        SearchTask t = SearchTask.cpu(dag, Workloads.FOUR_CORES);
        assertThat(t.workloadKey()).isEqualTo(dag.workloadKey());
        assertThat(t.workloadKey())
                .isEqualTo(SearchTask.cpu(Workloads.matmul(4, 4, 4), Workloads.FOUR_CORES)
                        .workloadKey());
        assertThat(t.target()).isEqualTo(Target.cpu());
        assertThat(t.target().kind().isGpu()).isFalse();
        assertThat(t.hardware()).isEqualTo(Workloads.FOUR_CORES);
        String h200 = "cuda -arch=sm_90 -max-threads-per-block=1024 -shared-memory-per-block=49152 -warp-size=32";
        SearchTask g = SearchTask.of(dag, h200, HardwareParams.cuda(49152, 0, 1024, 8, 32));
        assertThat(g.target()).isEqualTo(CudaTarget.h200());
        assertThat(g.target().kind().isGpu()).isTrue();
        assertThat(g.targetDescription()).isEqualTo(h200);
        SearchTask derived = SearchTask.of(dag, CudaTarget.h200());
        assertThat(derived.hardware()).isEqualTo(HardwareParams.of(CudaTarget.h200()));
        assertThat(derived.hardware().toLogArray()).containsExactly(1, 16, 64, 49152, Integer.MAX_VALUE, 1024, 8, 32);
        assertThatThrownBy(() -> SearchTask.of(dag, " ", Workloads.FOUR_CORES))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("target");
        assertThatThrownBy(() -> SearchTask.of(dag, "llvm", Workloads.FOUR_CORES))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("'llvm'")
                .hasMessageContaining("unknown kind");
        assertThatThrownBy(() -> new SearchTask(dag, null, Workloads.FOUR_CORES, "k"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("needs a target");
    }
}
