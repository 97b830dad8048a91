package dev.kiln.bench.plot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.jit.LlvmBackend;
import dev.kiln.jit.RawIr;
import dev.kiln.target.CpuTarget;
import org.junit.jupiter.api.Test;

/**
 * The instruction-peak loops compile to the instruction they are named for, one per chain; read for a Sapphire
 * Rapids target (AVX-512 VNNI, BF16 and FP16) on any machine, never run here.
 */
class PeakProbeTest {
    private static final CpuTarget SPR = LlvmBackend.hostTarget()
            .withCpu(
                    "sapphirerapids",
                    "+avx2,+fma,+f16c,+bmi,+bmi2,+avx512f,+avx512dq,+avx512cd,+avx512bw,+avx512vl,+avx512vnni,"
                            + "+avx512bf16,+avx512fp16");

    @Test
    void everyProbeLoopHoldsOneInstructionPerChain() {
        for (PeakProbe p : PeakProbe.values()) {
            try (RawIr code = RawIr.compile(SPR, "peak probe " + p, p.ir(), "kiln_peak")) {
                String asm = code.assembly();
                assertThat(p.instructions(asm)).as(p + "\n" + asm).isGreaterThanOrEqualTo(PeakProbe.CHAINS);
                assertThat(p.unavailableReason(SPR)).as(p.toString()).isNull();
            }
        }
        // The float16 count takes only the ph forms: the f32 loop holds vfmadd...ps, none of them.
        try (RawIr f32 = RawIr.compile(SPR, "f32", PeakProbe.FMA.ir(), "kiln_peak")) {
            assertThat(PeakProbe.FP16.instructions(f32.assembly())).isZero();
        }
    }

    @Test
    void aMachineWithoutAvx512Fp16SaysSo() {
        CpuTarget noFp16 = LlvmBackend.hostTarget().withCpu("znver4", "+avx2,+fma,+avx512f,+avx512bw,+avx512vl");
        assertThat(PeakProbe.FP16.unavailableReason(noFp16)).isEqualTo("skipped: no avx512_fp16");
        assertThat(PeakProbe.FP16.measure(noFp16, 1, 10, 1).note()).isEqualTo("skipped: no avx512_fp16");
    }
}
