package dev.kiln.autoschedule.annotate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link InitKBlocking} and {@link KBlocking}: with probability 1 every tiled stage where the choice
 * changes the program gets the outer reduction level in front of its level-1 spatial loops; the
 * programs compute what the default lowering computes (interpreter, seeded random inputs, float32
 * rtol and atol 1e-4: the sums are reordered), round-trip through JSON, replay to the same program,
 * and come out the same for the same seed; Ansor's rules never block.
 */
class InitKBlockingTest {

    /** Kiln's CPU sampler with InitKBlocking drawn with probability {@code p}. */
    static InitPopulation sampler(SearchTask task, double p) {
        return sampler(task, p, TargetRules.cpu());
    }

    /** A sampler of these rules with InitKBlocking drawn with probability {@code p}. */
    static InitPopulation sampler(SearchTask task, double p, TargetRules cpu) {
        List<InitRule> rules = new ArrayList<>(cpu.initRules());
        assertThat(rules.getFirst()).isInstanceOf(InitKBlocking.class);
        rules.set(0, new InitKBlocking(p));
        return new InitPopulation(
                task, cpu.sketches(task), rules, new FactorizationMemo(), InitPopulation.DEFAULT_MAX_FRUITLESS_DRAWS);
    }

    static NDArray run(PrimFunc f, ComputeDAG dag, List<NDArray> inputs) {
        Tensor out = dag.outputs().getFirst();
        NDArray o = NDArray.allocate(out.dtype(), out.shape().toArray());
        List<NDArray> args = new ArrayList<>(inputs);
        args.add(o);
        Interpreter.run(f, args.toArray(NDArray[]::new));
        return o;
    }

    static List<NDArray> inputs(ComputeDAG dag) {
        List<NDArray> in = new ArrayList<>();
        for (int i = 0; i < dag.inputs().size(); i++) {
            Tensor t = dag.inputs().get(i);
            in.add(NDArray.random(t.dtype(), 41 + i, t.shape().toArray()));
        }
        return in;
    }

    /** The number of K-blocked stages of the candidate. */
    static int blocked(Candidate c) {
        int n = 0;
        for (int id = 0; id < c.state().stages().size(); id++) if (KBlocking.isBlocked(c.state(), id)) n++;
        return n;
    }

    /** Samples with probability 1, checks every program against the default lowering; returns how many are blocked. */
    static int checkSampled(ComputeDAG dag, int n, long seed) {
        SearchTask task = Workloads.task(dag);
        List<Candidate> cs =
                sampler(task, 1.0).sample(n, new SplittableRandom(seed)).candidates();
        assertThat(cs).hasSize(n);
        List<NDArray> in = inputs(dag);
        NDArray expected = run(LowerDefault.lower("ref", dag), dag, in);
        int blockedPrograms = 0;
        for (Candidate c : cs) {
            for (int id = 0; id < c.state().stages().size(); id++) {
                KBlocking.Shape sh = KBlocking.shape(c.state(), id);
                if (sh == null) continue;
                // with probability 1 no stage is left unblocked where blocking would change the program
                if (!sh.blocked())
                    assertThat(KBlocking.changesProgram(c.state(), sh))
                            .as(c.key())
                            .isFalse();
                else checkOrder(c.state().stage(id), sh);
            }
            if (blocked(c) > 0) blockedPrograms++;
            Comparison cmp = run(Lowering.lower("kb", c.schedule()), dag, in).compareTo(expected, 1e-4, 1e-4);
            assertThat(cmp.ok()).as(c.key() + "\n" + cmp.report()).isTrue();
        }
        return blockedPrograms;
    }

    /** In a blocked stage every level-0 reduction loop comes before every level-1 spatial loop. */
    static void checkOrder(Stage st, KBlocking.Shape sh) {
        List<Iter> it = st.iters();
        int lastReduce0 = -1, firstSpatial1 = Integer.MAX_VALUE;
        for (int i = 0; i < it.size(); i++) {
            int level = KBlocking.level(it.get(i));
            if (it.get(i).kind() == dev.kiln.schedule.IterKind.REDUCE && level == 0) lastReduce0 = i;
            if (it.get(i).kind() == dev.kiln.schedule.IterKind.SPATIAL && level == 1)
                firstSpatial1 = Math.min(firstSpatial1, i);
        }
        assertThat(lastReduce0).as(it.toString()).isLessThan(firstSpatial1);
        assertThat(lastReduce0 - sh.r() + 1).isEqualTo(sh.nR());
    }

    @Test
    void blockedMatmulsComputeTheReference() {
        ComputeDAG dag = Workloads.matmul(32, 48, 64);
        assertThat(checkSampled(dag, 24, 3)).isGreaterThan(6);
    }

    @Test
    void blockedConvsComputeTheReference() {
        ComputeDAG dag = Workloads.conv2dNhwcRelu(1, 10, 10, 8, 16, 3);
        assertThat(checkSampled(dag, 16, 4)).isGreaterThan(3);
    }

    @Test
    void theCacheWriteTileAtLevelOneIsBlockedLikeGotoBlas() {
        // matmul.local (the cache-write stage) computed at matmul's level-0 tile: i.0 j.0 k.0 i.1 j.1 i.2 j.2 k.1 i.3
        // j.3, B.local packed at k.0, A.local (with row packing) at i.1
        SearchTask task = Workloads.task(Workloads.matmul(64, 64, 64));
        int seen = 0, withA = 0;
        for (Candidate c : sampler(task, 1.0, TargetRules.cpu().withRowPacking())
                .sample(60, new SplittableRandom(8))
                .candidates()) {
            int local = c.state().stages().stream().map(Stage::name).toList().indexOf("matmul.local");
            if (local < 0 || !KBlocking.isBlocked(c.state(), local)) continue;
            List<String> names =
                    c.state().stage(local).iters().stream().map(Iter::name).toList();
            assertThat(names).containsExactly("i.0", "j.0", "k.0", "i.1", "j.1", "i.2", "j.2", "k.1", "i.3", "j.3");
            seen++;
            // B's block is packed per K block, A's (when packed) per row block inside it
            for (int id = 0; id < c.state().stages().size(); id++) {
                Stage st = c.state().stage(id);
                if (!st.name().equals("A.local") && !st.name().equals("B.local")) continue;
                assertThat(st.attachStage()).isEqualTo(local);
                String at = c.state().stage(local).all().get(st.attachIter()).name();
                assertThat(at).as(st.name()).isEqualTo(st.name().equals("A.local") ? "i.1" : "k.0");
                if (st.name().equals("A.local")) withA++;
            }
        }
        assertThat(seen).isPositive();
        assertThat(withA).isPositive();
    }

    @Test
    void blockedProgramsRoundTripThroughJsonAndReplay() {
        ComputeDAG dag = Workloads.matmul(32, 48, 64);
        SearchTask task = Workloads.task(dag);
        int checked = 0;
        for (Candidate c :
                sampler(task, 1.0).sample(16, new SplittableRandom(5)).candidates()) {
            if (blocked(c) == 0) continue;
            Schedule back = Schedule.fromJson(c.schedule().toJson(), dag);
            assertThat(back.steps()).isEqualTo(c.schedule().steps());
            Candidate again = Candidate.of(back);
            assertThat(again.key()).isEqualTo(c.key());
            assertThat(blocked(again)).isEqualTo(blocked(c));
            checked++;
        }
        assertThat(checked).isGreaterThan(3);
    }

    @Test
    void sameSeedSameProgramsAndHalfTheStagesByDefault() {
        SearchTask task = Workloads.task(Workloads.matmul(64, 64, 64));
        List<String> a = new ArrayList<>(), b = new ArrayList<>();
        int blocked = 0, total = 0;
        for (Candidate c :
                TargetRules.cpu().sample(task, 60, new SplittableRandom(12)).candidates()) {
            a.add(c.key());
            blocked += Math.min(1, blocked(c));
            total++;
        }
        for (Candidate c :
                TargetRules.cpu().sample(task, 60, new SplittableRandom(12)).candidates()) b.add(c.key());
        assertThat(a).isEqualTo(b);
        // the default probability blocks some programs and leaves others (those at level 2 are never eligible)
        assertThat(blocked).isBetween(5, total - 5);
    }

    /** A sampler with InitKBlocking(probability, largeProbability) and reduction blocks drawn with {@code kc}. */
    static InitPopulation sampler(SearchTask task, double probability, double largeProbability, double kc) {
        TargetRules cpu = TargetRules.cpu();
        List<InitRule> rules = new ArrayList<>(cpu.initRules());
        rules.set(0, new InitKBlocking(probability, largeProbability));
        return new InitPopulation(
                task,
                cpu.sketches(task),
                rules,
                new InitFillTileSize(new FactorizationMemo(), 0.5, 0.25, kc),
                InitPopulation.DEFAULT_MAX_FRUITLESS_DRAWS);
    }

    @Test
    void largeReductionsWithABlockOf128OrMoreTakeTheLargeProbability() {
        ComputeDAG dag = Workloads.matmul(32, 64, 512);
        SearchTask task = Workloads.task(dag);
        int blockedLarge = 0;
        for (double kc : new double[] {0, 1}) {
            int blocked = 0;
            for (Candidate c :
                    sampler(task, 0, 1, kc).sample(30, new SplittableRandom(7)).candidates()) {
                for (int id = 0; id < c.state().stages().size(); id++) {
                    KBlocking.Shape sh = KBlocking.shape(c.state(), id);
                    if (sh == null || !sh.blocked()) continue;
                    // only stages with a block of 128 or more (and K >= 256) are blocked
                    assertThat(InitKBlocking.large(c.state(), sh)).as(c.key()).isTrue();
                    checkOrder(c.state().stage(id), sh);
                    blocked++;
                }
            }
            if (kc == 0)
                assertThat(blocked).as("no block above 64, no large stage").isZero();
            else blockedLarge = blocked;
        }
        assertThat(blockedLarge).isGreaterThan(8);
        // and the other way round: small blocks blocked, large ones not
        for (Candidate c :
                sampler(task, 1, 0, 1).sample(20, new SplittableRandom(7)).candidates()) {
            for (int id = 0; id < c.state().stages().size(); id++) {
                KBlocking.Shape sh = KBlocking.shape(c.state(), id);
                if (sh != null && sh.blocked())
                    assertThat(InitKBlocking.large(c.state(), sh)).as(c.key()).isFalse();
            }
        }
        assertThat(new InitKBlocking())
                .isEqualTo(
                        new InitKBlocking(InitKBlocking.DEFAULT_PROBABILITY, InitKBlocking.DEFAULT_LARGE_PROBABILITY));
        assertThatThrownBy(() -> new InitKBlocking(0.5, -0.1))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("largeProbability");
    }

    @Test
    void probabilityZeroAndAnsorsRulesNeverBlock() {
        SearchTask task = Workloads.task(Workloads.matmul(64, 64, 64));
        for (Candidate c : sampler(task, 0).sample(20, new SplittableRandom(2)).candidates())
            assertThat(blocked(c)).as(c.key()).isZero();
        for (Candidate c :
                TargetRules.ansorCpu().sample(task, 20, new SplittableRandom(2)).candidates())
            assertThat(blocked(c)).as(c.key()).isZero();
        assertThatThrownBy(() -> new InitKBlocking(1.5))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("InitKBlocking probability");
    }

    @Test
    void shapesAreReadFromSplitLevels() {
        LoopState s = TargetRules.cpu().sketches(Workloads.task(Workloads.matmul(64, 64, 64))).stream()
                .map(k -> k.state())
                .filter(st -> st.stages().stream().noneMatch(x -> x.name().endsWith(".local")))
                .findFirst()
                .orElseThrow();
        int c = s.stageIndex("matmul");
        KBlocking.Shape sh = KBlocking.shape(s, c);
        assertThat(sh).isEqualTo(new KBlocking.Shape(c, 4, 2, 1, false));
        assertThat(sh.toggledOrder(10)).containsExactly(0, 1, 4, 2, 3, 5, 6, 7, 8, 9);
        LoopState blocked = s.apply(sh.toggle(s));
        KBlocking.Shape back = KBlocking.shape(blocked, c);
        assertThat(back).isEqualTo(new KBlocking.Shape(c, 2, 2, 1, true));
        assertThat(back.toggledOrder(10)).containsExactly(0, 1, 3, 4, 2, 5, 6, 7, 8, 9);
        assertThat(blocked.apply(back.toggle(blocked)).stage(c).iters())
                .isEqualTo(s.stage(c).iters());
        // the untiled initial state has no shape
        assertThat(KBlocking.shape(LoopState.initial(s.dag()), c)).isNull();
    }
}
