package dev.kiln.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.cuda.codegen.CudaCodegen;
import dev.kiln.cuda.codegen.CudaModule;
import dev.kiln.cuda.codegen.Launch;
import dev.kiln.cuda.compile.CudaCompiler;
import dev.kiln.cuda.compile.Nvcc;
import dev.kiln.cuda.compile.Nvrtc;
import dev.kiln.cuda.compile.PtxCache;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.SimpleGpuSchedule;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * NVRTC through Panama. The library is whatever {@code libnvrtc.so.*} is installed, or the one
 * {@code scripts/fetch-nvrtc.sh} put in {@code .cache/nvrtc}; without one the tests that need it
 * are skipped with the probe's reason. With one, the operator library's kernels compile to sm_90
 * PTX in process, errors come back with NVRTC's log and the source line, and the compiler facade
 * caches PTX on disk.
 */
class NvrtcTest {
    private static void assumeNvrtc() {
        Nvrtc.Availability a = Nvrtc.availability();
        assumeTrue(a.available(), a.toString());
    }

    @Test
    void availabilityIsReportedPlainly() {
        Nvrtc.Availability a = Nvrtc.availability();
        assertThat(a).isSameAs(Nvrtc.availability());
        if (a.available()) {
            assertThat(a.version()).matches("\\d+\\.\\d+");
            assertThat(a.toString()).startsWith("NVRTC " + a.version() + " (").contains("libnvrtc.so.");
        } else {
            assertThat(a.toString()).startsWith("NVRTC unavailable: ");
            assertThrows(KilnException.class, Nvrtc::version);
        }
        System.out.println("NVRTC probe: " + a + "; CUDA compiler: " + CudaCompiler.describe());
    }

    @Test
    void operatorLibraryCompilesToSm90Ptx(@TempDir Path dir) {
        assumeNvrtc();
        assertThat(Nvrtc.supportedArchs()).contains(90);
        CudaCompiler compiler = new CudaCompiler(new PtxCache(dir));
        List<String> failures = new ArrayList<>();
        for (OpLibrary.Case c : OpLibrary.all()) {
            CudaModule m = CudaCodegen.generate(GpuTesting.lower(c.name(), SimpleGpuSchedule.of(c.dag(), 64)));
            CudaCompiler.Result r = compiler.compile(m, 90);
            assertThat(r.compiler()).startsWith("nvrtc ");
            String ptx = r.ptx();
            if (!ptx.contains(".target sm_90")) failures.add(c.name() + ": no .target sm_90");
            for (Launch l : m.launches())
                if (!ptx.contains(".entry " + l.name() + "(")) failures.add(c.name() + ": no entry " + l.name());
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void compileErrorsCarryTheLogAndTheLine() {
        assumeNvrtc();
        String src = "extern \"C\" __global__ void k(float* x) {\n  x[0] = undefined_name;\n}\n";
        KilnException e = assertThrows(KilnException.class, () -> Nvrtc.compile(src, "broken.cu", 90, List.of()));
        assertThat(e.getMessage())
                .contains("broken.cu(2)")
                .contains("undefined_name")
                .contains("    2|   x[0] = undefined_name;");
    }

    @Test
    void compilerCachesPtxOnDisk(@TempDir Path dir) {
        assumeTrue(
                Nvrtc.availability().available() || Nvcc.find().isPresent(),
                "neither NVRTC nor nvcc here: " + Nvrtc.availability());
        OpLibrary.Case c = OpLibrary.all().getFirst();
        CudaModule m = CudaCodegen.generate(GpuTesting.lower(c.name(), SimpleGpuSchedule.of(c.dag(), 32)));
        CudaCompiler compiler = new CudaCompiler(new PtxCache(dir));
        CudaCompiler.Result first = compiler.compile(m, 90), second = compiler.compile(m, 90);
        assertThat(first.cached()).isFalse();
        assertThat(second.cached()).isTrue();
        assertThat(second.ptx()).isEqualTo(first.ptx());
        assertThat(second.compiler()).isEqualTo(first.compiler());
        assertThat(new CudaCompiler(new PtxCache(dir)).compile(m, 80).cached()).isFalse();
    }
}
