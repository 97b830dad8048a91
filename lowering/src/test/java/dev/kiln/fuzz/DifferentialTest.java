package dev.kiln.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.interp.Interpreter;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleException;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Differential testing of schedules: random computations under random valid schedules must
 * compute what their default lowering computes, in the reference interpreter. Every case prints
 * its seed; {@code -Dkiln.fuzz.seed=<seed> -Dkiln.fuzz.cases=1} replays one. CI runs 300 cases;
 * {@code ./kiln fuzz 10000} runs the long campaign (see README).
 *
 * <p>Every pass's result is checked by the well-formedness verifier ({@code VerifyWellFormed}), so
 * an ill-formed program fails the case at the pass that made it.
 *
 * <p>Tolerance: float32 with rtol 1e-4 and atol 1e-4 — schedules may reorder a reduction
 * (rfactor), which changes float32 rounding, on values of magnitude about 1.
 */
class DifferentialTest {
    static final int CASES = Integer.getInteger("kiln.fuzz.cases", 300);
    static final long SEED = Long.getLong("kiln.fuzz.seed", 0x6b696c6eL);
    static final boolean VERBOSE = Boolean.getBoolean("kiln.fuzz.verbose");

    @Test
    void scheduledProgramsMatchTheDefaultLowering() {
        int lowered = 0, notLowerable = 0, rejectedSteps = 0;
        List<String> failures = new ArrayList<>();
        for (int c = 0; c < CASES; c++) {
            long seed = SEED + c;
            SplittableRandom rng = new SplittableRandom(seed);
            ComputeDAG dag = RandomComputations.generate(rng);
            RandomSchedules.Result r = RandomSchedules.generate(dag, rng, rng.nextInt(4) == 0);
            rejectedSteps += r.rejected();
            Schedule sch = r.schedule();
            String where =
                    "case " + c + " seed " + seed + " (replay: -Dkiln.fuzz.seed=" + seed + " -Dkiln.fuzz.cases=1)";
            if (VERBOSE) System.out.println(where + ": " + sch.steps().size() + " steps");
            try {
                checkDataRoundTrip(sch);
                PrimFunc scheduled;
                try {
                    scheduled = Lowering.lower(
                            "scheduled", sch, Lowering.Options.defaults().withVerify(true));
                } catch (ScheduleException e) {
                    notLowerable++;
                    if (VERBOSE) System.out.println("  not lowerable: " + e.getMessage());
                    continue;
                }
                lowered++;
                PrimFunc reference = LowerDefault.lower("reference", dag);
                String diff = compare(dag, reference, scheduled, seed);
                if (diff != null) failures.add(describe(where, dag, sch, scheduled, diff));
            } catch (RuntimeException | AssertionError e) {
                failures.add(describe(where, dag, sch, null, e.toString()));
            }
        }
        System.out.printf(
                "differential: %d cases from seed %d, %d lowered, %d not lowerable, %d illegal steps proposed "
                        + "and dropped, %d failures%n",
                CASES, SEED, lowered, notLowerable, rejectedSteps, failures.size());
        assertThat(failures).as("failing cases").isEmpty();
        assertThat(notLowerable)
                .as("cases whose valid schedule could not be lowered")
                .isZero();
    }

    private static void checkDataRoundTrip(Schedule sch) {
        Schedule back = Schedule.fromJson(sch.toJson(), sch.dag());
        if (!back.equals(sch)) throw new AssertionError("JSON round trip changed the schedule: " + sch.toJson());
        if (!back.replay().toString().equals(sch.replay().toString())) throw new AssertionError("replay differs");
    }

    private static String compare(ComputeDAG dag, PrimFunc reference, PrimFunc scheduled, long seed) {
        List<NDArray> inputs = new ArrayList<>();
        List<Tensor> ins = dag.inputs();
        for (int i = 0; i < ins.size(); i++) {
            inputs.add(NDArray.random(
                    ins.get(i).dtype(), seed * 7 + i, ins.get(i).shape().toArray()));
        }
        NDArray expected = run(reference, dag, inputs);
        NDArray actual = run(scheduled, dag, inputs);
        Comparison cmp = actual.compareTo(expected, 1e-4, 1e-4);
        return cmp.ok() ? null : cmp.report();
    }

    private static NDArray run(PrimFunc f, ComputeDAG dag, List<NDArray> inputs) {
        Tensor out = dag.outputs().get(0);
        NDArray o = NDArray.allocate(out.dtype(), out.shape().toArray());
        List<NDArray> args = new ArrayList<>(inputs);
        args.add(o);
        Interpreter.run(f, args.toArray(NDArray[]::new));
        return o;
    }

    private static String describe(String where, ComputeDAG dag, Schedule sch, PrimFunc f, String what) {
        return where + ": " + what + "\n--- computation\n" + dag + "--- schedule\n" + sch.toJavaSource()
                + (f == null ? "" : "--- lowered\n" + f);
    }
}
