package dev.kiln.jit.jvm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.fuzz.RandomComputations;
import dev.kiln.fuzz.RandomSchedules;
import dev.kiln.interp.Interpreter;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleException;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The differential corpus (random computations under random valid schedules with parallel,
 * vectorized and unrolled loops, {@code dev.kiln.fuzz}) through the JVM backend: each scheduled
 * program must compute exactly (bit for bit) what the interpreter computes for the same program, on
 * every parameter. Every case prints its seed; {@code -Dkiln.jvmfuzz.seed=<seed>
 * -Dkiln.jvmfuzz.cases=1} replays one; {@code -Dkiln.jvmfuzz.cases=10000} runs a long campaign.
 */
class JvmDifferentialTest {
    static final int CASES = Integer.getInteger("kiln.jvmfuzz.cases", 600);
    static final long SEED = Long.getLong("kiln.jvmfuzz.seed", 0x6a766dL);

    @Test
    void scheduledProgramsMatchTheInterpreter() {
        int compiled = 0, notLowerable = 0, vectorLoops = 0;
        List<String> failures = new ArrayList<>();
        for (int c = 0; c < CASES; c++) {
            long seed = SEED + c;
            SplittableRandom rng = new SplittableRandom(seed);
            ComputeDAG dag = RandomComputations.generate(rng);
            Schedule sch = RandomSchedules.generate(dag, rng, false).schedule();
            String where = "case " + c + " seed " + seed + " (replay: -Dkiln.jvmfuzz.seed=" + seed
                    + " -Dkiln.jvmfuzz.cases=1)";
            PrimFunc f;
            try {
                f = sch.lower("scheduled");
            } catch (ScheduleException e) {
                notLowerable++;
                continue;
            }
            try {
                JvmKernel k = JvmCheck.exact(f, seed);
                compiled++;
                if (k.source().contains("jdk/incubator/vector/")) vectorLoops++;
                if (Boolean.getBoolean("kiln.jvmfuzz.notes")) {
                    for (String n : k.notes()) System.out.println("note: " + n.replaceAll("'[^']*'", "'_'"));
                }
            } catch (RuntimeException | AssertionError e) {
                failures.add(where + ": " + e + "\n--- computation\n" + dag + "--- schedule\n" + sch.toJavaSource()
                        + "--- lowered\n" + f);
            }
        }
        System.out.printf("jvm differential: %d cases from seed %d, %d compiled and matched, %d with Vector API code, "
                + "%d not lowerable, %d failures%n", CASES, SEED, compiled, vectorLoops, notLowerable, failures.size());
        assertThat(failures).as("failing cases").isEmpty();
        assertThat(vectorLoops).as("cases that exercised vector code").isPositive();
    }
}
