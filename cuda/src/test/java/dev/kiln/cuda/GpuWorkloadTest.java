package dev.kiln.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.ir.DType;
import dev.kiln.nn.Quant;
import dev.kiln.target.CudaTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import org.junit.jupiter.api.Test;

/**
 * The CUDA measurer's workload (host side, no device needed): the interpreter's references, and the tolerance of
 * integer outputs that round floats, one step as on the CPU.
 */
class GpuWorkloadTest {
    @Test
    void aQuantizedOutputIsCheckedWithinOneStepAndAnIntegerSumExactly() {
        Tensor x = Te.placeholder("x", DType.FLOAT32, 64);
        Tensor s = Te.placeholder("s", DType.FLOAT32, 1);
        Tensor z = Te.placeholder("z", DType.INT8, 1);
        Tensor a = Te.placeholder("a", DType.INT32, 64);
        Tensor sum = Te.compute(
                "sum", dev.kiln.te.Shape.of(64), i -> a.at(i).add(z.at(0).cast(DType.INT32)));
        try (GpuWorkload q = GpuWorkload.of(
                        SearchTask.of(ComputeDAG.of(Quant.quantize(x, s, z)), CudaTarget.h200()), 3, true);
                GpuWorkload exact = GpuWorkload.of(SearchTask.of(ComputeDAG.of(sum), CudaTarget.h200()), 3, true)) {
            assertThat(q.hasReferences()).isTrue();
            assertThat(q.atol(0, 1e-3)).isEqualTo(1.0);
            assertThat(exact.atol(0, 1e-3)).isEqualTo(1e-3);
        }
    }
}
