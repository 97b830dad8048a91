package dev.kiln.autoschedule.scheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The choice of the task scheduler on synthetic tasks whose latency after each round is given,
 * with every pick worked out by hand below. Latencies are in seconds, written as "ms" in the
 * comments. With the weighted sum, the chain rule gives chain_i = w_i; after t rounds and no
 * similarity group, forward = (g - g/t) - g = -g/t, and grad = w (0.2 backward + 0.8 forward).
 */
class SchedulerLoopTest {

    static TaskSchedulerOptions.Builder opts(int trials, int perRound) {
        return TaskSchedulerOptions.builder()
                .trials(trials)
                .measuresPerRound(perRound)
                .seed(1);
    }

    static SchedulerTrace run(List<CurveTask> tasks, TaskSchedulerOptions o) {
        return new SchedulerLoop(tasks, o, () -> 0L).run();
    }

    @Test
    void warmUpThenGradientPicksWithTheBackwardWindow() {
        // T0 (w 1): 4, 3, 1.5 ms in its first rounds; T1 (w 2): 1.5, 1.4, 1.35, 0.9 ms.
        List<CurveTask> tasks = List.of(
                CurveTask.of("t0", 1, 4e-3, 3e-3, 1.5e-3), CurveTask.of("t1", 2, 1.5e-3, 1.4e-3, 1.35e-3, 0.9e-3));
        // per_round = min(10, 80 / 2) = 10; 80 trials = 8 rounds: the warm-up [0, 1] and 6 picks.
        //  1: t = (1, 1), g = (4, 1.5):    grad0 = 0.8 * -4 = -3.2;        grad1 = 2 * 0.8 * -1.5 = -2.4   -> 0
        //  2: t = (2, 1), g = (3, 1.5):    grad0 = 0.8 * -3/2 = -1.2;      grad1 = -2.4                    -> 1
        //  3: t = (2, 2), g = (3, 1.4):    grad0 = -1.2;                   grad1 = 1.6 * -1.4/2 = -1.12    -> 0
        //  4: t = (3, 2), g = (1.5, 1.4):  grad0 = 0.8 * -1.5/3 = -0.4;    grad1 = -1.12                   -> 1
        //  5: t = (3, 3), g = (1.5, 1.35): grad0 = -0.4;                   grad1 = 1.6 * -1.35/3 = -0.72   -> 1
        //  6: t = (3, 4), g = (1.5, 0.9):  grad0 = -0.4; T1 now has a backward gradient over 3 rounds,
        //     (h[3] - h[0]) / 3 = (0.9 - 1.5) / 3 = -0.2, forward = -0.9/4 = -0.225:
        //     grad1 = 2 * (0.2 * -0.2 + 0.8 * -0.225) = 2 * (-0.04 - 0.18) = -0.44                     -> 1
        SchedulerTrace t = run(tasks, opts(80, 10).build());
        assertThat(t.perRound()).isEqualTo(10);
        assertThat(t.order()).containsExactly(0, 1, 0, 1, 0, 1, 1, 1);
        assertThat(t.trials()).isEqualTo(80);
        assertThat(t.stop()).isEqualTo(SchedulerStop.TRIAL_BUDGET);
        assertThat(tasks.get(1).asked).containsOnly(10);
        // The objective after the last round: 1.5 + 2 * 0.9 = 3.3 ms.
        assertThat(t.objective()).isCloseTo(3.3e-3, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(t.history()).hasSize(8);
        assertThat(t.history().getLast().trials()).isEqualTo(80);

        // Without the backward term (a window longer than the run), pick 6 is grad1 = 1.6 * -0.225
        // = -0.36 against grad0 = -0.4: T0.
        List<CurveTask> again = List.of(
                CurveTask.of("t0", 1, 4e-3, 3e-3, 1.5e-3), CurveTask.of("t1", 2, 1.5e-3, 1.4e-3, 1.35e-3, 0.9e-3));
        assertThat(run(again, opts(80, 10).backwardWindow(50).build()).order()).containsExactly(0, 1, 0, 1, 0, 1, 1, 0);
    }

    @Test
    void theSimilarityGroupTermPullsASlowMemberForward() {
        // T0 and T1 are "dense" with 1e6 FLOPs each (one group); T2 has no tag. All weights 1.
        // T0: 20, 10, 10 ... ms; T1: 1 ms; T2: 6 ms. per_round = min(10, 50 / 3) = 10; 5 rounds.
        //  warm-up [0, 1, 2]
        //  1: t = 1 everywhere, forward = -g: grad = 0.8 * (-20, -1, -6) = (-16, -0.8, -4.8)         -> 0
        //  2: T0 at t = 2, g = 10: g_next_1 = 10 - 10/2 = 5, but its group's best throughput is
        //     1e6 / 1 ms = 1e9 FLOP/s, so g_next_2 = beta * 1e6 / 1e9 = 2 ms: forward = 2 - 10 = -8,
        //     grad0 = 0.8 * -8 = -6.4 < grad2 = -4.8                                                -> 0
        //     (T1: g_next_2 = 2 > g_next_1 = 0, forward = -1, grad1 = -0.8.)
        long f = 1_000_000;
        List<CurveTask> grouped = List.of(
                CurveTask.of("t0", 1, 20e-3, 10e-3).tagged("dense", f),
                CurveTask.of("t1", 1, 1e-3).tagged("dense", f),
                CurveTask.of("t2", 1, 6e-3));
        assertThat(run(grouped, opts(50, 10).build()).order()).containsExactly(0, 1, 2, 0, 0);
        // Without tags T0's grad at pick 2 is 0.8 * -5 = -4 > -4.8: T2.
        List<CurveTask> plain =
                List.of(CurveTask.of("t0", 1, 20e-3, 10e-3), CurveTask.of("t1", 1, 1e-3), CurveTask.of("t2", 1, 6e-3));
        assertThat(run(plain, opts(50, 10).build()).order()).containsExactly(0, 1, 2, 0, 2);
        // A different FLOP bucket is a different group: 1.5e6 FLOPs is bucket 29, 1e6 is bucket 28.
        List<CurveTask> apart = List.of(
                CurveTask.of("t0", 1, 20e-3, 10e-3).tagged("dense", f),
                CurveTask.of("t1", 1, 1e-3).tagged("dense", 1_500_000),
                CurveTask.of("t2", 1, 6e-3));
        assertThat(run(apart, opts(50, 10).build()).order()).containsExactly(0, 1, 2, 0, 2);
    }

    @Test
    void similarityKeysBucketFlopsByLogBaseTheGoldenRatio() {
        // ln(1e6 + 1) / ln(1.618) = 13.8155 / 0.48119 = 28.71; ln(1.5e6 + 1) / ln(1.618) = 29.55.
        assertThat(SimilarityGroups.key("dense", 1_000_000)).isEqualTo("dense_28");
        assertThat(SimilarityGroups.key("dense", 1_500_000)).isEqualTo("dense_29");
        assertThat(SimilarityGroups.key("dense", 0)).isEqualTo("dense_0");
        assertThat(SimilarityGroups.key("", 1_000_000)).isEmpty();
        SimilarityGroups g = new SimilarityGroups(List.of("a", "a", "", "a"), new long[] {100, 110, 100, 1000});
        // log_1.618(101) = 9.59, log_1.618(111) = 9.79, log_1.618(1001) = 14.36.
        assertThat(g.members(0)).containsExactly(0, 1);
        assertThat(g.members(2)).isEmpty();
        assertThat(g.members(3)).containsExactly(3);
        g.remove(0);
        assertThat(g.members(0)).isEmpty();
        assertThat(g.members(1)).containsExactly(1);
    }

    @Test
    void deadTasksAreReportedAndNeverPickedAgain() {
        // T0: 4, 2, 1 ms; T1: every program fails; T2: 3 ms, then its second round finds nothing new;
        // T3: its round throws. per_round = min(10, 70 / 4) = 10.
        CurveTask exhausted = CurveTask.of("t2", 1, 3e-3);
        exhausted.exhaustedAt = 2;
        CurveTask throwing = new CurveTask("t3", 1, 1_000_000, "", k -> 1e-3) {
            @Override
            public RoundOutcome runRound(int n) {
                asked.add(n);
                throw new IllegalStateException("policy broke");
            }
        };
        List<CurveTask> tasks = List.of(
                CurveTask.of("t0", 1, 4e-3, 2e-3, 1e-3),
                CurveTask.of("t1", 1, Double.POSITIVE_INFINITY),
                exhausted,
                throwing);
        // Warm-up [0, 1, 2, 3]: 30 trials (T3 measured nothing). T1 has no valid program, T3 failed.
        // The objective sees 1e10 s for them, so chain_i is w_i up to rounding (about 2% at that size).
        //  1: grad0 = 0.8 * -4 = -3.2, grad2 = 0.8 * -3 = -2.4                      -> 0 (40 trials)
        //  2: grad0 = 0.8 * -2/2 = -0.8, grad2 = -2.4                               -> 2, measures nothing: dead
        //  3..5: T0 alone (70 trials)
        SchedulerTrace t = run(tasks, opts(70, 10).build());
        assertThat(t.order()).containsExactly(0, 1, 2, 3, 0, 2, 0, 0, 0);
        assertThat(t.trials()).isEqualTo(70);
        assertThat(t.tasks().get(0).status()).isEqualTo(TaskStatus.ALIVE);
        assertThat(t.tasks().get(0).trials()).isEqualTo(50);
        assertThat(t.tasks().get(1).status()).isEqualTo(TaskStatus.NO_VALID_PROGRAM);
        assertThat(t.tasks().get(1).trials()).isEqualTo(10);
        assertThat(t.tasks().get(2).status()).isEqualTo(TaskStatus.SEARCH_SPACE_EXHAUSTED);
        assertThat(t.tasks().get(3).status()).isEqualTo(TaskStatus.FAILED);
        assertThat(t.tasks().get(3).message()).contains("policy broke");
        // A task without a valid program leaves the end-to-end estimate unknown.
        assertThat(t.objective()).isNaN();
        assertThat(t.history()).allMatch(p -> !p.known());
        assertThat(t.history().getFirst().tsvLine()).contains("N/A");
    }

    @Test
    void whenEveryTaskDiesTheSchedulerStops() {
        CurveTask a = CurveTask.of("a", 1, 1e-3), b = CurveTask.of("b", 1, Double.POSITIVE_INFINITY);
        a.exhaustedAt = 3;
        // Warm-up [0, 1]; b is dead; a's second round measures 10, its third nothing.
        SchedulerTrace t = run(List.of(a, b), opts(1000, 10).build());
        assertThat(t.order()).containsExactly(0, 1, 0, 0);
        assertThat(t.stop()).isEqualTo(SchedulerStop.ALL_TASKS_DEAD);
        assertThat(t.trials()).isEqualTo(30);
    }

    @Test
    void allEqualGradientsAreBrokenUniformlyWithTheSeed() {
        // Three identical tasks: after the warm-up all gradients are 0.8 * -2 ms, so the first pick is
        // uniform over the three: the first draw of the scheduler's generator, nextInt(3). The picked
        // task then has grad 0.8 * -2/2 = -0.8 against -1.6 for the others, a partial tie that goes to
        // the first of them (argmin, as in Ansor); the third task is then the only one at t = 1.
        Set<Integer> firstPicks = new HashSet<>();
        for (long seed = 0; seed < 12; seed++) {
            List<Integer> order =
                    run(identical(), opts(60, 10).seed(seed).build()).order();
            int first = new SplittableRandom(seed).nextInt(3);
            List<Integer> rest = new ArrayList<>(List.of(0, 1, 2));
            rest.remove(Integer.valueOf(first));
            assertThat(order.subList(0, 5)).containsExactly(0, 1, 2, first, rest.get(0));
            assertThat(order.get(5)).isEqualTo(rest.get(1));
            assertThat(run(identical(), opts(60, 10).seed(seed).build()).order())
                    .isEqualTo(order);
            firstPicks.add(first);
        }
        assertThat(firstPicks).containsExactlyInAnyOrder(0, 1, 2);
    }

    static List<CurveTask> identical() {
        return List.of(CurveTask.of("a", 1, 2e-3), CurveTask.of("b", 1, 2e-3), CurveTask.of("c", 1, 2e-3));
    }

    @Test
    void roundRobinTakesLiveTasksInTurn() {
        CurveTask b = CurveTask.of("b", 5, 9e-3);
        b.exhaustedAt = 2;
        // per_round = min(10, 90 / 3) = 10. Warm-up [0, 1, 2] (30); then 0 (40), 1 finds nothing and dies,
        // 2 (50), 0 (60), 2 (70), 0 (80), 2 (90).
        SchedulerTrace t = run(
                List.of(CurveTask.of("a", 1, 1e-3), b, CurveTask.of("c", 1, 1e-3)),
                opts(90, 10).strategy(Strategy.ROUND_ROBIN).build());
        assertThat(t.order()).containsExactly(0, 1, 2, 0, 1, 2, 0, 2, 0, 2);
    }

    @Test
    void theTimeBudgetStopsAfterTheWarmUp() {
        // A clock that advances 1 s each time it is read. The budget (2.5 s) has passed by the time the
        // warm-up ends, yet the warm-up gives every task its round; then the scheduler stops.
        long[] now = {0};
        List<CurveTask> tasks =
                List.of(CurveTask.of("a", 1, 1e-3), CurveTask.of("b", 1, 1e-3), CurveTask.of("c", 1, 1e-3));
        SchedulerTrace t = new SchedulerLoop(
                        tasks,
                        opts(300, 10)
                                .strategy(Strategy.ROUND_ROBIN)
                                .timeBudget(java.time.Duration.ofMillis(2500))
                                .build(),
                        () -> (now[0]++) * 1_000_000_000L)
                .run();
        assertThat(t.order()).containsExactly(0, 1, 2);
        assertThat(t.stop()).isEqualTo(SchedulerStop.TIME_BUDGET);
        // no budget: the same tasks run to the trial budget
        assertThat(run(
                                tasks.stream()
                                        .map(x -> CurveTask.of(x.name(), 1, 1e-3))
                                        .toList(),
                                opts(60, 10).strategy(Strategy.ROUND_ROBIN).build())
                        .order())
                .hasSize(6);
    }

    @Test
    void perTaskEarlyStoppingKillsATaskThatStopsImproving() {
        // Round robin; T0 is 1 ms from its first round on, T1 improves every round (1/k ms).
        // perTaskEarlyStopping 25, per_round 10: T0 dies when (t - 1) * 10 > 25, at t = 4.
        List<CurveTask> tasks =
                List.of(CurveTask.of("flat", 1, 1e-3), new CurveTask("better", 1, 1_000_000, "", k -> 1e-3 / k));
        SchedulerTrace t = run(
                tasks,
                opts(200, 10)
                        .strategy(Strategy.ROUND_ROBIN)
                        .perTaskEarlyStopping(25)
                        .build());
        assertThat(t.order().subList(0, 10)).containsExactly(0, 1, 0, 1, 0, 1, 0, 1, 1, 1);
        assertThat(t.tasks().get(0).status()).isEqualTo(TaskStatus.EARLY_STOPPED);
        assertThat(t.tasks().get(0).rounds()).isEqualTo(4);
        assertThat(t.tasks().get(1).trials()).isEqualTo(160);
        assertThat(t.tasks().get(1).status()).isEqualTo(TaskStatus.ALIVE);
    }

    @Test
    void globalEarlyStoppingStopsWhenTheObjectiveStalls() {
        // Both flat: after the warm-up (20 trials) the objective never improves; 30 trials later (at 50) it stops.
        SchedulerTrace t = run(
                List.of(CurveTask.of("a", 1, 1e-3), CurveTask.of("b", 1, 2e-3)),
                opts(1000, 10).strategy(Strategy.ROUND_ROBIN).earlyStopping(30).build());
        assertThat(t.stop()).isEqualTo(SchedulerStop.EARLY_STOPPING);
        assertThat(t.trials()).isEqualTo(50);
    }

    @Test
    void aRestoredTaskSkipsTheWarmUpAndCountsItsTrials() {
        // 7 logged trials, best 4 ms from the 4th; per_round 4: rounds = round(7/4) = 2.
        CurveTask logged = CurveTask.of("logged", 1, 1e-3);
        logged.restored = new double[] {Double.POSITIVE_INFINITY, 5e-3, 5e-3, 4e-3, 4e-3, 4e-3, 4e-3};
        CurveTask failedBefore = CurveTask.of("failed", 1, 2e-3);
        failedBefore.restored = new double[] {Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY};
        // Budget 17: per_round = min(4, 17 / 2) = 4. Restored 9 trials; only 'failed' warms up (13).
        // Then grad0 = 0.8 * -4/2 = -1.6 (t = 2), grad1 = 0.8 * -2/1 = -1.6: all equal, a seeded draw; 4 more = 17.
        SchedulerTrace t = run(List.of(logged, failedBefore), opts(17, 4).build());
        assertThat(t.restoredTrials()).isEqualTo(9);
        assertThat(t.order().getFirst()).isEqualTo(1);
        assertThat(t.order()).hasSize(2);
        assertThat(t.order().get(1)).isEqualTo(new SplittableRandom(1).nextInt(2));
        assertThat(t.history().getFirst().task()).isEqualTo(-1);
        assertThat(t.history().getFirst().trials()).isEqualTo(9);
        assertThat(t.trials()).isEqualTo(17);
    }

    @Test
    void aBudgetBelowOneTrialPerTaskOrANonMonotoneObjectiveIsAnError() {
        assertThatThrownBy(() -> run(identical(), opts(2, 64).build()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("3 tasks");
        // per_round = min(64, 200 / 3) = 64; min(64, 100 / 3) = 33.
        assertThat(run(identical(), opts(200, 64).build()).perRound()).isEqualTo(64);
        assertThat(run(identical(), opts(100, 64).build()).perRound()).isEqualTo(33);
        Objective decreasing = (g, w) -> -g[0] - g[1] - g[2];
        assertThatThrownBy(() ->
                        run(identical(), opts(100, 10).objective(decreasing).build()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("objective decreases");
    }

    @Test
    void epsGreedyTaskChoiceIsOffByDefaultAndSeededWhenOn() {
        // With eps = 1 every pick is a uniform draw: the same seed gives the same order, and T1 (whose
        // gradient never wins: 0.8 * -0.1 ms against 0.8 * -10 ms) still gets rounds.
        List<CurveTask> a = List.of(CurveTask.of("big", 1, 10e-3), CurveTask.of("small", 1, 0.1e-3));
        List<Integer> off = run(a, opts(200, 10).build()).order();
        assertThat(off.subList(2, off.size())).containsOnly(0);
        List<Integer> on = run(
                        List.of(CurveTask.of("big", 1, 10e-3), CurveTask.of("small", 1, 0.1e-3)),
                        opts(200, 10).taskEpsGreedy(1).build())
                .order();
        assertThat(on.subList(2, on.size())).contains(1);
        assertThat(run(
                                List.of(CurveTask.of("big", 1, 10e-3), CurveTask.of("small", 1, 0.1e-3)),
                                opts(200, 10).taskEpsGreedy(1).build())
                        .order())
                .isEqualTo(on);
    }

    @Test
    void listenersSeeATableAfterEveryRound() {
        List<SchedulerSnapshot> seen = new ArrayList<>();
        run(
                List.of(CurveTask.of("alpha", 2, 1e-3), CurveTask.of("beta", 1, 2e-3)),
                opts(40, 10).listener(seen::add).build());
        assertThat(seen).hasSize(4);
        SchedulerSnapshot last = seen.getLast();
        // weighted: alpha 2 * 1 = 2 ms (50%), beta 1 * 2 = 2 ms (50%); objective 4 ms; 1e6 FLOPs / 1 ms = 1 GFLOP/s.
        String table = last.table();
        assertThat(table)
                .contains("alpha")
                .contains("beta")
                .contains("50.0%")
                .contains("1.00")
                .contains("Estimated total latency: 4.0000 ms")
                .contains("Trials: 40");
        assertThat(seen.getFirst().table()).contains("N/A");
    }
}
