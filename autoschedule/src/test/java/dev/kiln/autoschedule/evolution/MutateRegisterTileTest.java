package dev.kiln.autoschedule.evolution;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.annotate.FactorizationMemo;
import dev.kiln.autoschedule.annotate.RegisterTileSizes;
import dev.kiln.autoschedule.mutation.MutateRegisterTile;
import dev.kiln.autoschedule.mutation.WeightedMutation;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeDAG;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link MutateRegisterTile}: every child computes what the default lowering computes
 * (interpreter, seeded random inputs, float32 rtol and atol 1e-4, through
 * {@link MutationRulesTest#children}), changes only the spatial splits of one tiled reduction
 * stage, to another register tile that fits the registers, keeps the middle levels where they
 * still divide, round-trips through JSON and replays to the same program, and is the same for
 * the same seed.
 */
class MutateRegisterTileTest {
    static final HardwareParams HW = Workloads.FOUR_CORES;

    /** The parent's and child's register tiles of the changed group differ, and the child's fits. */
    static void checkRedrawn(SearchTask task, Candidate p, Candidate c) {
        List<RegisterTileSizes.Group> groups =
                RegisterTileSizes.groups(task.dag(), p.schedule().steps());
        List<Integer> d = MutationRulesTest.diff(p, c);
        assertThat(d).isNotEmpty();
        RegisterTileSizes.Group g = groups.stream()
                .filter(x -> x.splitSteps().containsAll(d))
                .findFirst()
                .orElseThrow(() ->
                        new AssertionError("changed steps " + d + " are not one register-tile group of " + groups));
        int n = g.splitSteps().size();
        int[] before = new int[n], after = new int[n];
        List<Long> extents = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            SplitStep a = (SplitStep) p.schedule().steps().get(g.splitSteps().get(k));
            SplitStep b = (SplitStep) c.schedule().steps().get(g.splitSteps().get(k));
            before[k] = a.lengths().getLast();
            after[k] = b.lengths().getLast();
            extents.add(b.extent());
            // the split covers ceil(extent / inner) innermost tiles exactly: a tail of less than one tile
            long q = (b.extent() + after[k] - 1) / after[k];
            List<Integer> midB = b.lengths().subList(0, b.lengths().size() - 1);
            assertThat(q % midB.stream().mapToLong(Integer::longValue).reduce(1, (x, y) -> x * y))
                    .as(b.toString())
                    .isZero();
            List<Integer> midA = a.lengths().subList(0, a.lengths().size() - 1);
            long midProd = midA.stream().mapToLong(Integer::longValue).reduce(1, (x, y) -> x * y);
            if (q % midProd == 0) {
                assertThat(b.lengths().subList(0, b.lengths().size() - 1))
                        .as("middle levels kept")
                        .isEqualTo(midA);
            }
        }
        assertThat(after).isNotEqualTo(before);
        long rows = 1;
        for (int k = 0; k < n - 1; k++) rows *= after[k];
        int lanes = HW.lanes(g.elementBytes());
        assertThat(after[n - 1] % lanes).isZero();
        assertThat(RegisterTileSizes.fits(HW, rows, after[n - 1] / lanes))
                .as(Arrays.toString(after))
                .isTrue();
        FactorizationMemo memo = new FactorizationMemo();
        List<int[]> all = new ArrayList<>(RegisterTileSizes.candidates(HW, g.elementBytes(), extents, memo));
        all.addAll(RegisterTileSizes.tailCandidates(HW, g.elementBytes(), extents, memo));
        assertThat(all).anyMatch(t -> Arrays.equals(t, after));
    }

    @Test
    void matmulChildrenRedrawTheRegisterTile() {
        ComputeDAG dag = Workloads.matmul(48, 64, 40);
        SearchTask task = Workloads.task(dag);
        int made = MutationRulesTest.children(dag, new MutateRegisterTile(), 16, (p, c) -> checkRedrawn(task, p, c));
        assertThat(made).isGreaterThan(10);
    }

    @Test
    void convChildrenRedrawTheRegisterTile() {
        ComputeDAG dag = Workloads.conv2dNhwcRelu(1, 14, 14, 8, 32, 3);
        SearchTask task = Workloads.task(dag);
        int made = MutationRulesTest.children(dag, new MutateRegisterTile(), 10, (p, c) -> checkRedrawn(task, p, c));
        assertThat(made).isGreaterThan(5);
    }

    @Test
    void childrenRoundTripThroughJsonAndAreReproducible() {
        ComputeDAG dag = Workloads.matmul(48, 64, 40);
        SearchTask task = Workloads.task(dag);
        int checked = 0;
        for (Candidate p : MutationRulesTest.parents(task, 12, 9)) {
            Candidate c = new MutateRegisterTile().apply(task, p, new SplittableRandom(31));
            if (c == null) continue;
            Candidate again = new MutateRegisterTile().apply(task, p, new SplittableRandom(31));
            assertThat(again.schedule().steps()).isEqualTo(c.schedule().steps());
            Schedule back = Schedule.fromJson(c.schedule().toJson(), dag);
            assertThat(back.steps()).isEqualTo(c.schedule().steps());
            assertThat(Candidate.of(back).key()).isEqualTo(c.key());
            checked++;
        }
        assertThat(checked).isGreaterThan(8);
    }

    @Test
    void middleLevelsFollowTheNearestProductWhenTheyNoLongerDivide() {
        MutateRegisterTile rule = new MutateRegisterTile();
        // 56 = 2 * 4 * 7: the middle 4 with a new innermost 14 would need 56 % 56 == 0: kept.
        SplitStep kept = new SplitStep(0, 0, 56L, List.of(4, 7), true);
        assertThat(rule.lengths(kept, 14, new SplittableRandom(1))).containsExactly(4, 14);
        // middle 8 with innermost 14 needs 112 | 56: no; the nearest middle products to 8 over 56/14 = 4 are 4.
        SplitStep moved = new SplitStep(0, 0, 56L, List.of(8, 7), true);
        assertThat(rule.lengths(moved, 14, new SplittableRandom(1))).containsExactly(4, 14);
        // three levels: (2, 2, 7) with innermost 8 → middle product 4 kept only if 56 % 32 == 0: no;
        // nearest products dividing 7: 7 or 1 (|log 7/4| < |log 1/4|), every split of 7 into two levels.
        SplitStep three = new SplitStep(0, 0, 56L, List.of(2, 2, 7), true);
        List<Integer> l = rule.lengths(three, 8, new SplittableRandom(1));
        assertThat(l.getLast()).isEqualTo(8);
        assertThat(l.get(0) * l.get(1)).isEqualTo(7);
        // a tail: 6 rows on 56 cover ceil(56 / 6) = 10 tiles; the middle 2 divides 10 and is kept
        assertThat(rule.lengths(kept.withLengths(List.of(2, 7)), 6, new SplittableRandom(1)))
                .containsExactly(2, 6);
        // the middle 4 does not divide 10: the nearest factors of 10 are 5 (|log 5/4|) over 2 (|log 2/4|)
        assertThat(rule.lengths(kept, 6, new SplittableRandom(1))).containsExactly(5, 6);
    }

    @Test
    void everyTileWithATailIsDrawnSometimes() {
        // a 10-wide image: tiles with a tail (3, 4, 6, 7, 8 or 9 rows) come out of the rule, and their children are
        // correct
        // (MutationRulesTest.children runs them in the interpreter)
        ComputeDAG dag = Workloads.conv2dNhwcRelu(1, 10, 10, 4, 16, 3);
        SearchTask task = Workloads.task(dag);
        int[] tails = {0};
        int made = MutationRulesTest.children(dag, new MutateRegisterTile(new FactorizationMemo(), 1.0), 10, (p, c) -> {
            checkRedrawn(task, p, c);
            for (Step s : c.schedule().steps()) {
                if (s instanceof SplitStep sp
                        && sp.isConcrete()
                        && sp.extent() != null
                        && sp.extent() % sp.lengths().getLast() != 0) {
                    tails[0]++;
                    break;
                }
            }
        });
        assertThat(made).isGreaterThan(5);
        assertThat(tails[0]).isGreaterThan(3);
    }

    @Test
    void stagesWithoutARegisterTileAndGpuTasksGiveNoChild() {
        ComputeDAG pool = Workloads.softmaxNm(16, 32);
        SearchTask task = Workloads.task(pool);
        for (Candidate p : MutationRulesTest.parents(task, 6, 3)) {
            if (RegisterTileSizes.groups(pool, p.schedule().steps()).isEmpty()) {
                assertThat(new MutateRegisterTile().apply(task, p, new SplittableRandom(1)))
                        .isNull();
            }
        }
        ComputeDAG mm = Workloads.matmul(64, 48, 32);
        SearchTask gpu = GpuEvolutionTest.task(mm);
        Candidate p = MutationRulesTest.parents(Workloads.task(mm), 1, 3).getFirst();
        assertThat(new MutateRegisterTile().apply(gpu, p, new SplittableRandom(1)))
                .isNull();
    }

    @Test
    void ansorWeightsNeverDrawTheRule() {
        EvolutionOptions o = EvolutionOptions.defaults().withPopulation(48).withThreads(1);
        List<WeightedMutation> ansor = TargetRules.ansorCpu().mutations();
        assertThat(ansor).noneMatch(m -> m.rule() instanceof MutateRegisterTile);
        assertThat(TargetRules.cpu().mutations())
                .anyMatch(m -> m.rule() instanceof MutateRegisterTile && m.weight() > 0);
        EvolutionarySearch es = new EvolutionarySearch(
                EvolutionarySearchTest.TASK,
                ansor,
                new EvolutionarySearchTest.InnerTileModel(),
                o,
                null,
                new EvolutionarySearch.Stats());
        es.run(EvolutionarySearchTest.start(48), 8, java.util.Set.of(), new SplittableRandom(2));
        assertThat(es.stats().validByRule).doesNotContainKey("MutateRegisterTile");
        assertThat(es.stats().validByRule.get("MutateTileSize")).isPositive();
    }

    /** Steps other than the group's splits are the parent's. */
    @Test
    void onlyTheGroupsSplitsChange() {
        ComputeDAG dag = Workloads.matmul(48, 64, 40);
        SearchTask task = Workloads.task(dag);
        for (Candidate p : MutationRulesTest.parents(task, 8, 4)) {
            Candidate c = new MutateRegisterTile().apply(task, p, new SplittableRandom(5));
            if (c == null) continue;
            List<Step> a = p.schedule().steps(), b = c.schedule().steps();
            for (int i = 0; i < a.size(); i++) {
                if (!a.get(i).equals(b.get(i))) assertThat(a.get(i)).isInstanceOf(SplitStep.class);
            }
        }
    }
}
