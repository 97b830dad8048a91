package dev.kiln.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.cuda.codegen.CudaCodegen;
import dev.kiln.cuda.codegen.CudaModule;
import dev.kiln.cuda.codegen.CudaOptions;
import dev.kiln.schedule.SimpleGpuSchedule;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every operator of the library ({@link OpLibrary}) under the simple GPU schedule (each stage its
 * own kernel, spatial loops fused and bound to blockIdx.x/threadIdx.x): the GPU passes accept
 * it, the interpreter runs it to the default lowering's numbers (seeded inputs, rtol = atol =
 * 1e-5; the schedules do not reorder any reduction), and its CUDA C compiles with nvcc for
 * sm_90, with exact and with fast math (all kernels in one nvcc run per option set).
 */
class OpLibraryGpuTest {
    private static final List<OpLibrary.Case> CASES = OpLibrary.all();
    private static final List<PrimFunc> LOWERED = new ArrayList<>();

    @BeforeAll
    static void lowerAll() {
        for (OpLibrary.Case c : CASES) LOWERED.add(GpuTesting.lower(c.name(), SimpleGpuSchedule.of(c.dag(), 64)));
    }

    @Test
    void interpreterRunsEveryGpuScheduleToTheReference() {
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < CASES.size(); i++) {
            String diff = GpuTesting.compareWithDefault(CASES.get(i).dag(), LOWERED.get(i), 100 + i, 1e-5);
            if (diff != null) failures.add(CASES.get(i).name() + ": " + diff);
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void everyKernelCompilesWithNvcc() {
        GpuTesting.assumeNvcc();
        List<CudaModule> modules = new ArrayList<>();
        for (PrimFunc f : LOWERED) {
            modules.add(CudaCodegen.generate(f));
            modules.add(CudaCodegen.generate(
                    new PrimFunc(f.name() + "_fast", f.params(), f.body()),
                    CudaOptions.defaults().withFastMath(true)));
        }
        int kernels = modules.stream().mapToInt(m -> m.launches().size()).sum();
        List<String> ptx = GpuTesting.compileWithNvcc(modules);
        long entries = ptx.stream()
                .mapToLong(p ->
                        p.lines().filter(l -> l.startsWith(".visible .entry")).count())
                .sum();
        assertThat(entries).isEqualTo(kernels);
    }
}
