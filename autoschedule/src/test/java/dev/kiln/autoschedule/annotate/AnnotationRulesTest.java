package dev.kiln.autoschedule.annotate;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.InferBound;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.nn.Activation;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.PragmaStep;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Each random-annotation rule of notes §5 on its own. */
class AnnotationRulesTest {

    private static ComputeDAG relu(long... shape) {
        return ComputeDAG.of(Activation.relu(Te.placeholder("x", FLOAT32, shape)));
    }

    private static LoopState initial(ComputeDAG dag) {
        return InferBound.apply(LoopState.initial(dag));
    }

    @Test
    void fillTileSizeDrawsEveryExactFactorisationUniformly() {
        SearchTask task = Workloads.task(Workloads.matmul(8, 8, 8));
        Sketch plain = TargetRules.cpu().sketches(task).get(0);
        // Ansor's uniform draw alone (the register-tile draws are RegisterTileSizesTest's)
        InitFillTileSize fill = new InitFillTileSize(new FactorizationMemo(), 0);
        Map<List<Integer>, Integer> counts = new HashMap<>();
        SplittableRandom rng = new SplittableRandom(5);
        int draws = 4000;
        for (int d = 0; d < draws; d++) {
            List<Step> steps = fill.fill(task, plain, rng);
            SplitStep first = (SplitStep) steps.get(0);
            counts.merge(first.lengths(), 1, Integer::sum);
            for (Step s : steps)
                if (s instanceof SplitStep sp) assertThat(sp.isConcrete()).isTrue();
        }
        // 8 = 2^3 into three tile sizes: 20 schemes, each drawn about 200 times
        assertThat(counts).hasSize(20);
        for (int c : counts.values()) assertThat(c).isBetween(draws / 20 / 2, draws / 20 * 3 / 2);
    }

    @Test
    void innermostTileRespectsTheLimit() {
        SearchTask task = SearchTask.cpu(Workloads.matmul(8, 8, 256), Workloads.FOUR_CORES.withAnnotationLimits(4, 16));
        InitFillTileSize fill = new InitFillTileSize(new FactorizationMemo());
        SplittableRandom rng = new SplittableRandom(6);
        int blocks = 0;
        for (Sketch sk : TargetRules.cpu().sketches(task)) {
            for (int d = 0; d < 50; d++) {
                for (Step s : fill.fill(task, sk, rng)) {
                    if (!(s instanceof SplitStep sp)) continue;
                    // the one exception: a reduction block of 128-384 (ReductionTileSizes) on the k split (extent 256)
                    if (sp.extent() == 256 && sp.lengths().getLast() >= ReductionTileSizes.KC_MIN) {
                        assertThat(sp.lengths().getLast()).isIn(128, 256);
                        blocks++;
                    } else assertThat(sp.lengths().getLast()).isLessThanOrEqualTo(4);
                }
            }
        }
        assertThat(blocks).isPositive();
    }

    @Test
    void parallelFusesOuterLoopsUntilSixteenTimesTheCores() {
        SearchTask task = Workloads.task(relu(64, 64));
        // 64 <= 16 x 4, then 64 x 64 > 64: both loops are fused and made parallel
        LoopState s = new InitParallel().apply(task, initial(task.dag()), new SplittableRandom(1));
        Stage st = s.stage(1);
        assertThat(st.iters()).hasSize(1);
        assertThat(st.iter(0).name()).isEqualTo("i@j@");
        assertThat(st.iter(0).annotation()).isEqualTo(IterAnnotation.PARALLEL);
        // 100 > 64 at once: only the outer loop
        SearchTask wide = Workloads.task(relu(100, 3));
        st = new InitParallel()
                .apply(wide, initial(wide.dag()), new SplittableRandom(1))
                .stage(1);
        assertThat(st.iters().stream().map(Iter::toString).toList()).containsExactly("parallel i (100)", "j (3)");
        // a reduction stops the walk
        SearchTask mm = Workloads.task(Workloads.matmul(2, 3, 50));
        st = new InitParallel()
                .apply(mm, initial(mm.dag()), new SplittableRandom(1))
                .stage(2);
        assertThat(st.iters().stream().map(Iter::toString).toList()).containsExactly("parallel i@j@ (6)", "k (50)");
    }

    @Test
    void parallelGoesIntoAttachedStagesWhenTheOuterLoopsHaveExtentOne() {
        Tensor x = Te.placeholder("x", FLOAT32, 1, 64);
        Tensor a = Te.compute("a", x.shape(), (i, j) -> x.at(i, j).mul(2.0));
        Tensor b = Te.compute("b", x.shape(), (i, j) -> a.at(i, j).add(1.0));
        ScheduleBuilder sb = ScheduleBuilder.on(ComputeDAG.of(b));
        sb.stage("a").computeAt("b", "i");
        SearchTask task = Workloads.task(sb.state().dag());
        LoopState s = new InitParallel().apply(task, InferBound.apply(sb.state()), new SplittableRandom(1));
        // b's i has extent 1 and a computed inside it: a's loops become parallel, then b's j
        assertThat(s.stage(1).iters().stream().map(Iter::toString).toList()).containsExactly("parallel i@j@ (64)");
        assertThat(s.stage(2).iters().stream().map(Iter::toString).toList())
                .containsExactly("i (1)", "parallel j (64)");
        assertThat(NestedParallel.has(s)).isFalse();
    }

    @Test
    void nestedParallelLoopsAreFound() {
        Tensor x = Te.placeholder("x", FLOAT32, 8, 8);
        Tensor a = Te.compute("a", x.shape(), (i, j) -> x.at(i, j).mul(2.0));
        Tensor b = Te.compute("b", x.shape(), (i, j) -> a.at(i, j).add(1.0));
        ScheduleBuilder sb = ScheduleBuilder.on(ComputeDAG.of(b));
        sb.stage("a").computeAt("b", "i");
        sb.stage("b").parallel("i");
        assertThat(NestedParallel.has(sb.state())).isFalse();
        sb.stage("a").parallel("j");
        assertThat(NestedParallel.has(sb.state())).isTrue();
        ScheduleBuilder own = ScheduleBuilder.on(ComputeDAG.of(b));
        own.stage("b").parallel("i").parallel("j");
        assertThat(NestedParallel.has(own.state())).isTrue();
    }

    @Test
    void unrollPragmaOnlyOnReducingStagesFromTheCpuChoices() {
        SearchTask task = Workloads.task(Workloads.softmaxNm(4, 32));
        Map<Integer, Integer> seen = new HashMap<>();
        SplittableRandom rng = new SplittableRandom(3);
        for (int d = 0; d < 200; d++) {
            LoopState s = InitUnroll.cpu().apply(task, initial(task.dag()), rng);
            for (int id = 0; id < s.stages().size(); id++) {
                String name = s.stage(id).name();
                boolean reduces = name.equals("softmax_max") || name.equals("softmax_sum");
                if (!reduces) assertThat(s.stage(id).autoUnrollMaxStep()).isZero();
            }
            for (Step st : s.steps()) {
                PragmaStep p = (PragmaStep) st;
                assertThat(p.iterId()).isZero();
                seen.merge(Integer.parseInt(p.pragma().substring(p.pragma().indexOf('$') + 1)), 1, Integer::sum);
            }
            assertThat(s.steps()).hasSize(2);
        }
        assertThat(seen.keySet()).containsExactlyInAnyOrder(0, 16, 64, 512);
    }

    @Test
    void vectorizationNeverFusesAllCandidateLoops() {
        // 2 x 2 x 2 = 8 <= 16: three fusible loops, so 1 or 2 are vectorised, never 3 (Ansor's quirk)
        SearchTask task = Workloads.task(relu(2, 2, 2));
        Map<String, Integer> seen = new HashMap<>();
        SplittableRandom rng = new SplittableRandom(9);
        for (int d = 0; d < 100; d++) {
            Stage st = new InitVectorization()
                    .apply(task, initial(task.dag()), rng)
                    .stage(1);
            seen.merge(st.iters().getLast().toString(), 1, Integer::sum);
        }
        assertThat(seen.keySet()).containsExactlyInAnyOrder("vectorize k (2)", "vectorize j@k@ (4)");
        // 4 x 8 = 32 > 16: only the innermost loop is fusible
        SearchTask big = Workloads.task(relu(4, 8));
        Stage st = new InitVectorization().apply(big, initial(big.dag()), rng).stage(1);
        assertThat(st.iters().stream().map(Iter::toString).toList()).containsExactly("i (4)", "vectorize j (8)");
        // a tiled stage vectorises one loop, and never a reduction loop
        SearchTask mm = Workloads.task(Workloads.matmul(4, 4, 4));
        st = new InitVectorization().apply(mm, initial(mm.dag()), rng).stage(2);
        assertThat(st.iters().stream().map(Iter::toString).toList()).containsExactly("i (4)", "j (4)", "k (4)");
    }

    @Test
    void aLongContiguousRowIsVectorisedWholeOnTheLlvmBackendOnly() {
        SplittableRandom rng = new SplittableRandom(3);
        // 4 x 1024: the row is 128 vectors of 8 floats (FOUR_CORES' 32-byte vectors), read element by element
        SearchTask row = Workloads.task(relu(4, 1024));
        Stage st = new InitVectorization().apply(row, initial(row.dag()), rng).stage(1);
        assertThat(st.iters().stream().map(Iter::toString).toList()).containsExactly("i (4)", "vectorize j (1024)");
        // Ansor's rule alone, the JVM backend: left to the compiler
        st = InitVectorization.ansor().apply(row, initial(row.dag()), rng).stage(1);
        assertThat(st.iters().getLast().toString()).isEqualTo("j (1024)");
        SearchTask jvm = SearchTask.of(row.dag(), dev.kiln.target.Target.jvm(), Workloads.FOUR_CORES);
        st = new InitVectorization().apply(jvm, initial(jvm.dag()), rng).stage(1);
        assertThat(st.iters().getLast().toString()).isEqualTo("j (1024)");
        // not a whole number of vectors
        SearchTask odd = Workloads.task(relu(4, 1020));
        st = new InitVectorization().apply(odd, initial(odd.dag()), rng).stage(1);
        assertThat(st.iters().getLast().toString()).isEqualTo("j (1020)");
        // a transposing copy reads a column per row: its lanes would be a gather
        Tensor x = Te.placeholder("x", FLOAT32, 64, 64);
        SearchTask transpose = Workloads.task(ComputeDAG.of(Te.compute("t", Te.shape(64, 64), (i, j) -> x.at(j, i))));
        st = new InitVectorization()
                .apply(transpose, initial(transpose.dag()), rng)
                .stage(1);
        assertThat(st.iters().getLast().toString()).isEqualTo("j (64)");
    }

    @Test
    void boundInferenceShrinksTheOuterTilesOfAComputedAtStage() {
        SearchTask task = Workloads.task(Workloads.matmul(64, 64, 64));
        // Ansor's sketches, by index (Kiln's add packed twins in between)
        List<Sketch> sketches = TargetRules.ansorCpu().sketches(task);
        Sketch level2 = sketches.get(2);
        List<Step> steps = new ArrayList<>(level2.steps());
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i) instanceof SplitStep sp && !sp.isConcrete()) {
                steps.set(i, sp.withLengths(sp.lengths().size() == 3 ? List.of(2, 4, 8) : List.of(8)));
            }
        }
        Candidate c = Candidate.of(task.dag(), steps);
        Stage local = c.state().stage(2);
        assertThat(local.name()).isEqualTo("matmul.local");
        Map<String, Long> ext = new HashMap<>();
        for (Iter it : local.iters()) ext.put(it.name(), it.extent());
        // the copy is split [2, 4 x 8] and the local stage sits at its j.1: a 32 x 32 tile
        assertThat(ext)
                .containsEntry("i.0", 1L)
                .containsEntry("i.1", 1L)
                .containsEntry("i.2", 4L)
                .containsEntry("i.3", 8L)
                .containsEntry("k.0", 8L)
                .containsEntry("k.1", 8L);
        // replayed without inference, the same loops have their root extents
        Stage raw = c.schedule().replay().stage(2);
        assertThat(raw.iter(2).name()).isEqualTo("i.1");
        assertThat(raw.iter(2).extent()).isEqualTo(2L);
        assertThat(c.key()).doesNotContain("i.0 (0,2)");
    }

    @Test
    void rejectedDrawsAreCountedByRuleAndDropped() {
        SearchTask task = Workloads.task(Workloads.matmul(8, 8, 16));
        List<Sketch> sketches = TargetRules.cpu().sketches(task);
        InitRule picky = new InitRule() {
            @Override
            public String name() {
                return "Picky";
            }

            @Override
            public LoopState apply(SearchTask t, LoopState s, SplittableRandom rng) {
                if (rng.nextInt(3) == 0) throw new InvalidSample("Picky", "one in three");
                return s;
            }
        };
        List<InitRule> rules = new ArrayList<>(TargetRules.cpu().initRules());
        rules.add(picky);
        InitPopulation pop = new InitPopulation(task, sketches, rules, new FactorizationMemo(), 200);
        InitPopulation.Result r = pop.sample(40, new SplittableRandom(2));
        assertThat(r.candidates()).hasSize(40);
        int invalid = r.stats().invalid().getOrDefault("Picky", 0);
        assertThat(invalid).isPositive().isEqualTo(r.stats().totalInvalid());
        assertThat(r.stats().draws()).isEqualTo(40 + invalid + r.stats().duplicates());
        assertThat(r.stats().firstReason().get("Picky")).contains("one in three");
    }

    @Test
    void aSmallSpaceRunsOutInsteadOfLoopingForever() {
        // a 1 x 1 relu has one loop nest; only the (no-op) compute_root choice is random
        SearchTask task = Workloads.task(relu(1, 1));
        InitPopulation pop = new InitPopulation(
                task, TargetRules.cpu().sketches(task), TargetRules.cpu().initRules(), new FactorizationMemo(), 50);
        InitPopulation.Result r = pop.sample(10, new SplittableRandom(1));
        assertThat(r.candidates()).hasSize(1);
        assertThat(r.stats().draws()).isEqualTo(51);
    }
}
