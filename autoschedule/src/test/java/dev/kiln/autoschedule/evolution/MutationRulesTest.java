package dev.kiln.autoschedule.evolution;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.annotate.InitUnroll;
import dev.kiln.autoschedule.annotate.NestedParallel;
import dev.kiln.autoschedule.mutation.MutateAutoUnroll;
import dev.kiln.autoschedule.mutation.MutateComputeLocation;
import dev.kiln.autoschedule.mutation.MutateParallel;
import dev.kiln.autoschedule.mutation.MutateTileSize;
import dev.kiln.autoschedule.mutation.MutationRule;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.interp.Interpreter;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.AnnotationStep;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.FuseStep;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.PragmaStep;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;

/**
 * Every mutation and crossover child is a valid program that computes what the default lowering
 * computes (interpreter, seeded random inputs, float32 rtol and atol 1e-4 for reordered sums),
 * and each rule changes exactly the decision it is about.
 */
class MutationRulesTest {

    static List<Candidate> parents(SearchTask task, int n, long seed) {
        return TargetRules.cpu()
                .population(task, TargetRules.cpu().sketches(task))
                .sample(n, new SplittableRandom(seed))
                .candidates();
    }

    static NDArray run(PrimFunc f, ComputeDAG dag, List<NDArray> inputs) {
        Tensor out = dag.outputs().getFirst();
        NDArray o = NDArray.allocate(out.dtype(), out.shape().toArray());
        List<NDArray> args = new ArrayList<>(inputs);
        args.add(o);
        Interpreter.run(f, args.toArray(NDArray[]::new));
        return o;
    }

    /** Applies {@code rule} to each parent; checks validity and numbers; hands (parent, child) to {@code check}. */
    static int children(ComputeDAG dag, MutationRule rule, int n, BiConsumer<Candidate, Candidate> check) {
        SearchTask task = Workloads.task(dag);
        List<NDArray> inputs = new ArrayList<>();
        for (int i = 0; i < dag.inputs().size(); i++) {
            Tensor t = dag.inputs().get(i);
            inputs.add(NDArray.random(t.dtype(), 77 + i, t.shape().toArray()));
        }
        NDArray expected = run(LowerDefault.lower("ref", dag), dag, inputs);
        int made = 0;
        List<Candidate> ps = parents(task, n, 5);
        for (int i = 0; i < ps.size(); i++) {
            Candidate p = ps.get(i), c = rule.apply(task, p, new SplittableRandom(i));
            if (c == null) continue;
            // A factor moved between two levels that are fused into one loop prints the same state;
            // the search drops such a child as a duplicate of its parent (Kiln's register-tile
            // samples draw such parents from seed 5), so it is not counted here.
            if (rule instanceof MutateTileSize && c.key().equals(p.key())) continue;
            made++;
            assertThat(c.key()).as(rule.name()).isNotEqualTo(p.key());
            assertThat(NestedParallel.has(c.state())).isFalse();
            Comparison cmp =
                    run(Lowering.lower("child", c.schedule()), dag, inputs).compareTo(expected, 1e-4, 1e-4);
            assertThat(cmp.ok())
                    .as(rule.name() + " child of\n" + p.key() + "\n" + cmp.report())
                    .isTrue();
            check.accept(p, c);
        }
        return made;
    }

    /** The positions where two step lists differ. */
    static List<Integer> diff(Candidate a, Candidate b) {
        assertThat(b.schedule().steps()).hasSameSizeAs(a.schedule().steps());
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < a.schedule().steps().size(); i++) {
            if (!a.schedule().steps().get(i).equals(b.schedule().steps().get(i))) out.add(i);
        }
        return out;
    }

    @Test
    void tileSizeMovesOneFactorWithinOneSplit() {
        int made = children(Workloads.matmul(24, 20, 18), new MutateTileSize(), 12, (p, c) -> {
            List<Integer> d = diff(p, c);
            assertThat(d).hasSize(1);
            SplitStep a = (SplitStep) p.schedule().steps().get(d.getFirst());
            SplitStep b = (SplitStep) c.schedule().steps().get(d.getFirst());
            long pa = a.lengths().stream().mapToLong(Integer::longValue).reduce(1, (x, y) -> x * y);
            long pb = b.lengths().stream().mapToLong(Integer::longValue).reduce(1, (x, y) -> x * y);
            assertThat(a.extent() % pa).isZero();
            assertThat(b.extent() % pb).isZero();
            assertThat(b.lengths().getLast()).isLessThanOrEqualTo(64);
        });
        assertThat(made).isGreaterThan(8);
    }

    @Test
    void autoUnrollTakesAnotherValue() {
        int made = children(Workloads.matmul(17, 12, 10), new MutateAutoUnroll(InitUnroll.CPU_STEPS), 10, (p, c) -> {
            List<Integer> d = diff(p, c);
            assertThat(d).hasSize(1);
            PragmaStep a = (PragmaStep) p.schedule().steps().get(d.getFirst());
            PragmaStep b = (PragmaStep) c.schedule().steps().get(d.getFirst());
            int v = Integer.parseInt(b.pragma().substring(b.pragma().indexOf('$') + 1));
            assertThat(InitUnroll.CPU_STEPS).contains(v);
            assertThat(b.pragma()).isNotEqualTo(a.pragma());
        });
        assertThat(made).isEqualTo(10);
    }

    @Test
    void parallelChangesTheFusedLoops() {
        int made = children(Workloads.matmul(24, 20, 18), new MutateParallel(), 12, (p, c) -> {
            assertThat(parallelFuse(c)).isNotEqualTo(parallelFuse(p));
        });
        assertThat(made).isGreaterThan(8);
    }

    /** How many loops the first parallel loop fuses. */
    static int parallelFuse(Candidate c) {
        List<Step> s = c.schedule().steps();
        for (int i = 0; i < s.size(); i++) {
            if (s.get(i) instanceof AnnotationStep a && a.annotation() == IterAnnotation.PARALLEL) {
                return i > 0 && s.get(i - 1) instanceof FuseStep f && f.stageId() == a.stageId()
                        ? f.iterIds().size()
                        : 1;
            }
        }
        return 0;
    }

    @Test
    void computeLocationMovesOneStage() {
        int made = children(Workloads.conv2dBnRelu(1, 6, 6, 4, 8, 3, 1, 1), new MutateComputeLocation(), 16, (p, c) -> {
            List<Integer> d = diff(p, c);
            assertThat(d).hasSize(1);
            assertThat(c.schedule().steps().get(d.getFirst())).isInstanceOf(ComputeAtStep.class);
        });
        assertThat(made).isGreaterThan(2);
    }

    @Test
    void crossoverTakesEachStageFromOneParent() {
        ComputeDAG dag = Workloads.conv2dBnRelu(1, 6, 6, 4, 8, 3, 1, 1);
        SearchTask task = Workloads.task(dag);
        List<Candidate> ps = parents(task, 48, 9);
        int made = 0;
        for (int i = 0; i + 1 < ps.size(); i++) {
            Candidate a = ps.get(i), b = ps.get(i + 1);
            Candidate c = Crossover.apply(task, a, b, new SplittableRandom(i));
            if (c == null) continue;
            made++;
            List<Step> sa = a.schedule().steps(),
                    sb = b.schedule().steps(),
                    sc = c.schedule().steps();
            assertThat(sc).hasSameSizeAs(sa);
            boolean fromA = false, fromB = false;
            for (int k = 0; k < sc.size(); k++) {
                boolean isA = sc.get(k).equals(sa.get(k)),
                        isB = k < sb.size() && sc.get(k).equals(sb.get(k));
                assertThat(isA || isB).isTrue();
                fromA |= isA && !isB;
                fromB |= isB && !isA;
            }
            assertThat(fromA && fromB).isTrue();
            assertThat(NestedParallel.has(c.state())).isFalse();
        }
        assertThat(made).isGreaterThan(2);
    }

    @Test
    void crossoverOfOneStageMixesTileSizesOfOneSketch() {
        // Programs of one sketch line up step by step. Where one stage differs (a matmul without a
        // cache-write stage), the genes are its splits and unroll pragmas and the structural steps
        // stay the first parent's; where more differ, whole stages are exchanged.
        ComputeDAG dag = Workloads.matmul(48, 40, 32);
        SearchTask task = Workloads.task(dag);
        List<NDArray> inputs = List.of(
                NDArray.random(dag.inputs().get(0).dtype(), 5, 48, 32),
                NDArray.random(dag.inputs().get(1).dtype(), 6, 32, 40));
        NDArray expected = run(LowerDefault.lower("ref", dag), dag, inputs);
        java.util.Map<String, List<Candidate>> bySketch = new java.util.HashMap<>();
        for (Candidate c : parents(task, 96, 21))
            bySketch.computeIfAbsent(Crossover.signature(c), k -> new ArrayList<>())
                    .add(c);
        int made = 0, tried = 0, fine = 0;
        for (List<Candidate> group : bySketch.values()) {
            for (int i = 0; i + 1 < group.size() && i < 12; i++) {
                Candidate a = group.get(i), b = group.get(i + 1);
                tried++;
                Candidate c = Crossover.apply(task, a, b, new SplittableRandom(i));
                if (c == null) continue;
                made++;
                List<Step> sa = a.schedule().steps(),
                        sb = b.schedule().steps(),
                        sc = c.schedule().steps();
                assertThat(Crossover.signature(c)).isEqualTo(Crossover.signature(a));
                java.util.Set<Integer> differing = new java.util.HashSet<>();
                for (int k = 0; k < sa.size(); k++)
                    if (!sa.get(k).equals(sb.get(k))) differing.add(sa.get(k).stageId());
                boolean fromB = false;
                for (int k = 0; k < sc.size(); k++) {
                    Step x = sc.get(k);
                    assertThat(x.equals(sa.get(k)) || x.equals(sb.get(k))).isTrue();
                    fromB |= !x.equals(sa.get(k));
                    if (differing.size() == 1 && !(x instanceof SplitStep || x instanceof PragmaStep)) {
                        assertThat(x).isEqualTo(sa.get(k));
                    }
                }
                if (differing.size() == 1) fine++;
                assertThat(fromB).isTrue();
                Comparison cmp =
                        run(Lowering.lower("child", c.schedule()), dag, inputs).compareTo(expected, 1e-4, 1e-4);
                assertThat(cmp.ok()).as(cmp.report()).isTrue();
            }
        }
        // Most pairs of one sketch cross (a pair fails when it differs in fewer than two genes).
        assertThat(made).isGreaterThan(tried / 2);
        assertThat(fine).isPositive();
    }
}
