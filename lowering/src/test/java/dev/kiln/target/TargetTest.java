package dev.kiln.target;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.ir.KilnException;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TargetTest {
    @Test
    void cpuStringFormRoundTrips() {
        CpuTarget t = new CpuTarget("x86_64-unknown-linux-gnu", "znver5", "+avx2,+fma", 2, 512, 64);
        assertEquals(
                "cpu -mtriple=x86_64-unknown-linux-gnu -mcpu=znver5 -mattr=+avx2,+fma -cores=2 -vector-bits=512"
                        + " -cache-line=64",
                t.toString());
        assertEquals(t, Target.parse(t.toString()));
        CpuTarget bare = new CpuTarget("aarch64-unknown-linux-gnu", "generic", "", 8, 128, 128);
        assertThat(bare.toString()).doesNotContain("-mattr");
        assertEquals(bare, Target.parse(bare.toString()));
        assertEquals(16, t.lanes(4));
        assertThat(t.hasFeature("fma")).isTrue();
        assertThat(t.hasFeature("avx512f")).isFalse();
        assertEquals(1, t.withCores(1).cores());
    }

    @Test
    void cudaStringFormRoundTrips() {
        CudaTarget c = Target.cuda();
        assertEquals(
                "cuda -arch=sm_90 -max-threads-per-block=1024 -shared-memory-per-block=49152 -warp-size=32",
                c.toString());
        assertEquals(c, Target.parse(c.toString()));
        assertEquals(Target.Kind.CUDA, c.kind());
        CudaTarget tf32 = c.withFastMath(true).withTf32(true);
        assertThat(tf32.toString()).endsWith(" -fast-math=1 -tf32=1");
        assertEquals(tf32, Target.parse(tf32.toString()));
        assertThat(tf32.withTf32(false)).isEqualTo(c.withFastMath(true));
    }

    @Test
    void hostDetectionDescribesThisMachine() {
        CpuTarget h = Target.cpu();
        assertEquals(Target.Kind.CPU, h.kind());
        assertEquals(Runtime.getRuntime().availableProcessors(), h.cores());
        assertThat(h.triple()).contains("-");
        assertThat(h.vectorBits()).isIn(128, 256, 512);
        assertEquals(h, Target.parse(h.toString()));
        if (h.triple().startsWith("x86_64") && h.hasFeature("avx512f")) assertEquals(512, h.vectorBits());
    }

    @Test
    void cpuNamesFollowLlvm() {
        assertEquals("znver5", HostCpu.cpuName("AuthenticAMD", 0x1A, 2, Set.of()));
        assertEquals("znver4", HostCpu.cpuName("AuthenticAMD", 0x19, 0x11, Set.of()));
        assertEquals("znver3", HostCpu.cpuName("AuthenticAMD", 0x19, 0x01, Set.of()));
        assertEquals("emeraldrapids", HostCpu.cpuName("GenuineIntel", 6, 0xCF, Set.of()));
        assertEquals(
                "x86-64-v3", HostCpu.cpuName("GenuineIntel", 6, 0x01, Set.of("avx2", "fma", "bmi1", "bmi2", "movbe")));
        assertEquals("x86-64", HostCpu.cpuName("Other", 1, 1, Set.of()));
    }

    @Test
    void badStringsAndFieldsAreRejectedWithTheirReason() {
        assertThat(assertThrows(KilnException.class, () -> Target.parse("tpu -x=1"))
                        .getMessage())
                .contains("unknown kind 'tpu'");
        assertThat(assertThrows(KilnException.class, () -> Target.parse("cpu -mcpu=znver5"))
                        .getMessage())
                .contains("lacks -mtriple");
        assertThat(assertThrows(
                                KilnException.class,
                                () -> Target.parse(
                                        "cuda -arch=sm_90 -max-threads-per-block=x -shared-memory-per-block=1 "
                                                + "-warp-size=32"))
                        .getMessage())
                .contains("-max-threads-per-block=x is not an integer");
        assertThat(assertThrows(
                                KilnException.class,
                                () -> Target.parse(
                                        "cuda -arch=sm_90 -max-threads-per-block=1 -shared-memory-per-block=1 "
                                                + "-warp-size=32 -color=red"))
                        .getMessage())
                .contains("unknown option(s) [color]");
        assertThat(assertThrows(KilnException.class, () -> Target.parse("cpu mtriple"))
                        .getMessage())
                .contains("not of the form -key=value");
        assertThrows(KilnException.class, () -> new CpuTarget("x86_64", "a b", "", 1, 512, 64));
        assertThrows(KilnException.class, () -> new CpuTarget("x86_64", "znver5", "", 0, 512, 64));
        assertThrows(KilnException.class, () -> new CpuTarget("x86_64", "znver5", "", 1, 500, 64));
        assertThrows(KilnException.class, () -> new CudaTarget("volta", 1024, 0, 32));
    }

    @Test
    void aTargetWithoutABackendNamesTheTargetAndTheBackendsFound() {
        // the lowering module has no backend on its class path
        KilnException e = assertThrows(KilnException.class, () -> Backend.forTarget(Target.cuda()));
        assertThat(e.getMessage())
                .contains("no backend supports target 'cuda -arch=sm_90")
                .contains("backends found: none");
    }
}
