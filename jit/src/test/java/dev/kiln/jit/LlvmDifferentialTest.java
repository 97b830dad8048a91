package dev.kiln.jit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.fuzz.RandomComputations;
import dev.kiln.fuzz.RandomSchedules;
import dev.kiln.lower.Lowering;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleException;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The differential corpus of the schedules issue ({@code dev.kiln.fuzz}: random computations and
 * operators of the library under random valid schedules, with parallel, vectorized and unrolled
 * loops) through the LLVM backend: each scheduled program, compiled with exact floating-point
 * semantics (no FMA contraction), must compute what the interpreter computes for the same
 * program on every parameter. Tolerance: rtol 1e-5, atol 1e-6 — the only differences allowed are
 * libm's float exp/tanh/erf (a few ulp). Every case prints its seed;
 * {@code -Dkiln.llvmfuzz.seed=<seed> -Dkiln.llvmfuzz.cases=1} replays one.
 */
class LlvmDifferentialTest {
    static final int CASES = Integer.getInteger("kiln.llvmfuzz.cases", 200);
    static final long SEED = Long.getLong("kiln.llvmfuzz.seed", 0x6c6c766dL);

    @Test
    void scheduledProgramsMatchTheInterpreter() {
        int compiled = 0;
        List<String> failures = new ArrayList<>();
        for (int c = 0; c < CASES; c++) {
            long seed = SEED + c;
            SplittableRandom rng = new SplittableRandom(seed);
            ComputeDAG dag = RandomComputations.generate(rng);
            Schedule sch = RandomSchedules.generate(dag, rng, false).schedule();
            String where = "case " + c + " seed " + seed + " (replay: -Dkiln.llvmfuzz.seed=" + seed
                    + " -Dkiln.llvmfuzz.cases=1)";
            PrimFunc f;
            try {
                f = Lowering.lower("scheduled", sch);
            } catch (ScheduleException e) {
                failures.add(where + ": a valid schedule did not lower: " + e.getMessage());
                continue;
            }
            try {
                JitCheck.matches(f, seed, 1e-5, 1e-6);
                compiled++;
            } catch (RuntimeException | AssertionError e) {
                failures.add(where + ": " + e + "\n--- computation\n" + dag + "--- schedule\n" + sch.toJavaSource()
                        + "--- lowered\n" + f);
            }
        }
        System.out.printf(
                "llvm differential: %d cases from seed %d, %d compiled and matched, %d failures%n",
                CASES, SEED, compiled, failures.size());
        assertThat(failures).as("failing cases").isEmpty();
    }
}
