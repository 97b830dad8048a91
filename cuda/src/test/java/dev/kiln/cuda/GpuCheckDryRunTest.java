package dev.kiln.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The dry run of scripts/gpu-check.sh's Java part, at small sizes: it builds both tasks, samples
 * and lowers programs, generates their CUDA C (compiling it where a compiler is), and prints the
 * plan and an empty table, all without a GPU; bad options are refused.
 */
class GpuCheckDryRunTest {
    @Test
    void dryRunPlansBothWorkloadsWithoutAGpu() throws Exception {
        String out = dryRun("--dry-run", "--seconds", "5", "--matmul", "128", "--conv", "1,8,14,14,8,3,3,1");
        assertThat(out)
                .contains("dry run: matmul 128x128x128 (0.0 GFLOP): 1 sketch(es), 3 sampled programs lowered")
                .contains("dry run: conv2d N1 8x14x14->8 k3x3 p1")
                // the same layer as a float16 implicit GEMM: 196 pixels in 208 rows, 72 taps in 80
                .contains("dry run: tensor core conv2d f16 N1 8x14x14->8 k3x3 p1 (0.0 GFLOP): 1 sketch(es), 3 sampled")
                .contains("a real run tunes it for 5 s")
                .contains("Kiln GFLOP/s")
                .contains("(dry run: nothing measured)");
    }

    @Test
    void dryRunPlansTheTf32MatmulOnlyWhenAskedFor() throws Exception {
        String out = dryRun("--dry-run", "--tf32", "--seconds", "5", "--matmul", "64", "--conv", "1,8,14,14,8,3,3,1");
        // the Tensor Core sketch alone is sampled: the TF32 one exists only on a target with -tf32=1
        assertThat(out)
                .contains("dry run: tensor core matmul f16->f32 64 (0.0 GFLOP): 1 sketch(es)")
                .contains("dry run: tensor core matmul tf32->f32 64 (0.0 GFLOP): 1 sketch(es)");
    }

    /** Runs GpuCheck with {@code args}, echoes what it printed and returns it. */
    private static String dryRun(String... args) throws Exception {
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            GpuCheck.main(args);
        } finally {
            System.setOut(old);
        }
        String out = buf.toString(StandardCharsets.UTF_8);
        System.out.print(out);
        return out;
    }

    @Test
    void unknownOptionsAreRefused() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> GpuCheck.main(new String[] {"--fast"}));
        assertThat(e.getMessage()).contains("unknown option --fast").contains("usage");
    }
}
