package dev.kiln.autoschedule.sketch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Linalg;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A float16 matmul (float16 sums) searched for a Sapphire Rapids target with AVX-512 FP16: the default CPU rules'
 * programs compute in half-precision FMAs ({@code vfmadd231ph}, 32 lanes) with no hint from the user. The programs
 * are sampled and compiled, not run, so this runs on any machine (the instructions' results are checked against the
 * interpreter in jit's {@code Float16NativeTest} where the host has them).
 */
class Float16SearchTest {
    private static final CpuTarget SPR = Target.cpu()
            .withCpu(
                    "sapphirerapids",
                    "+avx2,+fma,+f16c,+avx512f,+avx512dq,+avx512bw,+avx512vl,+avx512vnni,+avx512bf16,+avx512fp16")
            .withCores(2)
            .withFastMath(true);

    @Test
    void sampledFloat16ProgramsUseHalfPrecisionFmas() {
        Tensor x = Te.placeholder("x", DType.FLOAT16, 64, 128);
        Tensor w = Te.placeholder("w", DType.FLOAT16, 128, 64);
        ComputeDAG dag = ComputeDAG.of(Linalg.matmul(x, w));
        SearchTask task = SearchTask.of(dag, SPR);
        TargetRules rules = TargetRules.cpu();
        var res = rules.population(task, rules.sketches(task)).sample(8, new SplittableRandom(23));
        assertThat(res.candidates()).isNotEmpty();
        Backend llvm = Backend.forTarget(SPR); // the LLVM backend, through its service
        int withHalfFma = 0;
        StringBuilder without = new StringBuilder();
        for (Candidate c : res.candidates()) {
            try (CompiledKernel k = llvm.compile(Lowering.lower("f16", c.schedule()), SPR)) {
                String asm = k.source().substring(k.source().indexOf("; ---- assembly"));
                if (asm.contains("vfmadd231ph") || asm.contains("vfmadd213ph") || asm.contains("vfmadd132ph")) {
                    withHalfFma++;
                } else {
                    without.append(c.schedule().toJson()).append('\n');
                }
                // a float16 sum never goes through float32 registers on this target
                assertThat(asm).as(c.schedule().toJson()).doesNotContain("vfmadd231ps");
            }
        }
        assertThat(withHalfFma)
                .as(
                        "programs with half-precision FMAs, of %d; without:%n%s",
                        res.candidates().size(), without)
                .isGreaterThanOrEqualTo((res.candidates().size() + 1) / 2);
    }
}
