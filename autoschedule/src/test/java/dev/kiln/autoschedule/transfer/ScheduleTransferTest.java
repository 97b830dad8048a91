package dev.kiln.autoschedule.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTask;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.interp.Interpreter;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.models.Models;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.SplitStep;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Programs of one task of the small ResNet adapted to its similar tasks: they replay, round-trip through JSON,
 * tile every refitted loop exactly, and compute what the default lowering of the other task computes in the
 * interpreter on seeded random inputs (float32, rtol = atol = 1e-4: tiling reorders the sums of at most a few
 * hundred terms of magnitude about 1).
 */
class ScheduleTransferTest {

    @Test
    void refitKeepsFactorsThatDivideAndShrinksTheOthersToDivisors() {
        // innermost first: 16 divides 112, 4 divides 7? no -> largest divisor of 7 not above 4 is 1
        assertThat(ScheduleTransfer.refit(List.of(16, 4), 112)).containsExactly(16, 1);
        assertThat(ScheduleTransfer.refit(List.of(8, 2, 7), 56)).containsExactly(8, 1, 7);
        assertThat(ScheduleTransfer.refit(List.of(16, 2), 24)).containsExactly(12, 2);
        assertThat(ScheduleTransfer.refit(List.of(64), 7)).containsExactly(7);
        assertThat(ScheduleTransfer.refit(List.of(4, 4, 4), 1)).containsExactly(1, 1, 1);
        for (long e = 1; e <= 60; e++) {
            List<Integer> f = ScheduleTransfer.refit(List.of(16, 3, 5), e);
            long prod = f.stream().mapToLong(Integer::longValue).reduce(1, (a, b) -> a * b);
            assertThat(e % prod).as("tiles of %d: %s", e, f).isZero();
        }
    }

    @Test
    void sampledConvolutionProgramsTransferBetweenTheSmallResnetsSimilarTasks() {
        List<NetworkTask> tasks = Network.tasks(Models.resnet18(1, 32, 4, 10, 5), StructureKeyTest.TARGET);
        Map<String, List<SearchTask>> groups = tasks.stream()
                .map(NetworkTask::task)
                .collect(Collectors.groupingBy(SearchTask::structureKey, LinkedHashMap::new, Collectors.toList()));
        List<SearchTask> group =
                groups.values().stream().filter(g -> g.size() >= 3).findFirst().orElseThrow();
        SearchTask from = group.getFirst();
        var rules = TargetRules.of(from);
        List<Candidate> sampled = rules.population(from, rules.sketches(from))
                .sample(12, new SplittableRandom(7))
                .candidates();
        int adapted = 0, refitted = 0;
        List<String> failures = new ArrayList<>();
        for (SearchTask to : group.subList(1, 3)) {
            ComputeDAG dag = to.dag();
            List<NDArray> inputs = randomInputs(dag, 11);
            NDArray expected = run(LowerDefault.lower("reference", dag), dag, inputs);
            for (Candidate c : sampled) {
                var r = ScheduleTransfer.adapt(c.schedule(), to, true);
                if (r.isEmpty()) continue;
                adapted++;
                Schedule s = r.get().schedule();
                assertThat(s.dag()).isSameAs(dag);
                assertThat(s.steps()).hasSameSizeAs(c.schedule().steps());
                // replays and round-trips through JSON to the same program
                assertThat(Candidate.of(Schedule.fromJson(s.toJson(), dag)).key())
                        .isEqualTo(r.get().key());
                for (int i = 0; i < s.steps().size(); i++) {
                    if (s.steps().get(i) instanceof SplitStep sp
                            && !sp.equals(c.schedule().steps().get(i))) refitted++;
                }
                Comparison cmp = run(Lowering.lower("adapted", s), dag, inputs).compareTo(expected, 1e-4, 1e-4);
                if (!cmp.ok()) failures.add(s.toJavaSource() + cmp.report());
            }
            expected.close();
            inputs.forEach(NDArray::close);
        }
        System.out.printf(
                "transfer in a group of %d tasks: %d of %d programs adapted, %d splits refitted%n",
                group.size(), adapted, 2 * sampled.size(), refitted);
        assertThat(failures).isEmpty();
        assertThat(adapted).as("adapted programs").isGreaterThanOrEqualTo(sampled.size());
        assertThat(refitted).as("refitted splits").isPositive();
    }

    @Test
    void aProgramOfAnotherStructureDoesNotTransfer() {
        List<NetworkTask> tasks = Network.tasks(Models.resnet18(1, 32, 4, 10, 5), StructureKeyTest.TARGET);
        SearchTask conv = tasks.stream()
                .filter(t -> t.description().startsWith("conv2d"))
                .findFirst()
                .orElseThrow()
                .task();
        SearchTask dense = tasks.stream()
                .filter(t -> t.description().startsWith("dense"))
                .findFirst()
                .orElseThrow()
                .task();
        var rules = TargetRules.of(conv);
        Candidate c = rules.population(conv, rules.sketches(conv))
                .sample(1, new SplittableRandom(3))
                .candidates()
                .getFirst();
        assertThat(ScheduleTransfer.adapt(c.schedule(), dense, true)).isEmpty();
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> ScheduleTransfer.adaptOrThrow(c.schedule(), dense, true))
                .isInstanceOf(dev.kiln.ir.KilnException.class)
                .hasMessageContaining("does not apply");
    }

    static List<NDArray> randomInputs(ComputeDAG dag, long seed) {
        List<NDArray> out = new ArrayList<>();
        int i = 0;
        for (Tensor t : dag.inputs())
            out.add(NDArray.random(t.dtype(), seed * 31 + i++, t.shape().toArray()));
        return out;
    }

    static NDArray run(PrimFunc f, ComputeDAG dag, List<NDArray> inputs) {
        Tensor out = dag.outputs().getFirst();
        NDArray o = NDArray.allocate(out.dtype(), out.shape().toArray());
        List<NDArray> args = new ArrayList<>(inputs);
        args.add(o);
        Interpreter.run(f, args.toArray(NDArray[]::new));
        return o;
    }
}
