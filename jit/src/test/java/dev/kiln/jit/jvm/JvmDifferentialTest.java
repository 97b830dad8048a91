package dev.kiln.jit.jvm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.fuzz.RandomComputations;
import dev.kiln.fuzz.RandomSchedules;
import dev.kiln.lower.Lowering;
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
 *
 * <p>The second test is the differential suite's own check (a scheduled program computes what the
 * default lowering computes) with both programs on the JVM backend instead of the interpreter, for
 * long runs: {@code ./kiln fuzz-jvm 100000}. Tolerance as there: float32 rtol 1e-4 and atol 1e-4,
 * since rfactor reorders reductions.
 */
class JvmDifferentialTest {
    static final int CASES = Integer.getInteger("kiln.jvmfuzz.cases", 400);
    static final long SEED = Long.getLong("kiln.jvmfuzz.seed", 0x6a766dL);
    static final int LONG_CASES = Integer.getInteger("kiln.jvmfuzz.long.cases", 150);

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
                f = Lowering.lower("scheduled", sch);
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
        System.out.printf(
                "jvm differential: %d cases from seed %d, %d compiled and matched, %d with Vector API code, "
                        + "%d not lowerable, %d failures%n",
                CASES, SEED, compiled, vectorLoops, notLowerable, failures.size());
        assertThat(failures).as("failing cases").isEmpty();
        assertThat(vectorLoops).as("cases that exercised vector code").isPositive();
    }

    @Test
    void scheduledProgramsMatchTheDefaultLoweringOnTheJvmBackend() {
        int checked = 0;
        List<String> failures = new ArrayList<>();
        for (int c = 0; c < LONG_CASES; c++) {
            long seed = SEED + c;
            SplittableRandom rng = new SplittableRandom(seed);
            ComputeDAG dag = RandomComputations.generate(rng);
            Schedule sch = RandomSchedules.generate(dag, rng, false).schedule();
            PrimFunc scheduled;
            try {
                scheduled = Lowering.lower("scheduled", sch);
            } catch (ScheduleException e) {
                continue;
            }
            PrimFunc reference = dev.kiln.lower.LowerDefault.lower("reference", dag);
            List<NDArray> inputs = new ArrayList<>();
            for (int i = 0; i < dag.inputs().size(); i++) {
                var t = dag.inputs().get(i);
                inputs.add(NDArray.random(t.dtype(), seed * 7 + i, t.shape().toArray()));
            }
            try (NDArray expected = run(reference, dag, inputs);
                    NDArray actual = run(scheduled, dag, inputs)) {
                Comparison cmp = actual.compareTo(expected, 1e-4, 1e-4);
                if (!cmp.ok()) {
                    failures.add("case " + c + " seed " + seed + ": " + cmp.report() + "\n--- schedule\n"
                            + sch.toJavaSource() + "--- lowered\n" + scheduled);
                }
                checked++;
            } catch (RuntimeException e) {
                failures.add("case " + c + " seed " + seed + ": " + e + "\n--- schedule\n" + sch.toJavaSource());
            } finally {
                for (NDArray a : inputs) a.close();
            }
        }
        System.out.printf(
                "jvm differential against the default lowering: %d cases, %d checked, %d failures%n",
                LONG_CASES, checked, failures.size());
        assertThat(failures).as("failing cases").isEmpty();
    }

    private static NDArray run(PrimFunc f, ComputeDAG dag, List<NDArray> inputs) {
        var out = dag.outputs().get(0);
        NDArray o = NDArray.allocate(out.dtype(), out.shape().toArray());
        List<NDArray> args = new ArrayList<>(inputs);
        args.add(o);
        JvmCheck.BACKEND.compile(f, JvmCheck.TARGET).call(args.toArray(NDArray[]::new));
        return o;
    }
}
