package dev.kiln.autoschedule.annotate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.interp.Interpreter;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Register tiles with a tail (issue 13 item 2): which tiles, how their splits cover the loop, and
 * that every sampled program with one computes what the default lowering computes (interpreter,
 * seeded random inputs, float32 rtol and atol 1e-4 for reordered sums) and round-trips through JSON.
 */
class RegisterTileTailsTest {
    private static final HardwareParams AVX512 = HardwareParams.cpu(2, 64, 64);

    @Test
    void tailTilesHaveExactlyOneRowTileThatDoesNotDivide() {
        List<Long> extents = List.of(1L, 56L, 56L, 64L);
        FactorizationMemo memo = new FactorizationMemo();
        List<int[]> tails = RegisterTileSizes.tailCandidates(AVX512, 4, extents, memo);
        List<String> names = new ArrayList<>();
        for (int[] t : tails) {
            int notDividing = 0;
            for (int k = 0; k < 3; k++) if (extents.get(k) % t[k] != 0) notDividing++;
            assertThat(notDividing).isEqualTo(1);
            assertThat(64 % t[3]).isZero();
            assertThat(t[3] % 16).isZero();
            assertThat(RegisterTileSizes.fits(AVX512, (long) t[0] * t[1] * t[2], t[3] / 16))
                    .isTrue();
            names.add(t[0] + "x" + t[1] + "x" + t[2] + "x" + t[3]);
        }
        // oneDNN-like tiles a 56-wide image cannot have exactly: 6 rows of four zmm, 12 rows of two
        assertThat(names).contains("1x1x6x64", "1x6x1x64", "1x1x12x32", "1x1x5x64", "1x2x3x64");
        for (int[] exact : RegisterTileSizes.candidates(AVX512, 4, extents, memo)) {
            assertThat(names).doesNotContain(exact[0] + "x" + exact[1] + "x" + exact[2] + "x" + exact[3]);
        }
        // a vector axis that half vectors do not divide gives no tile, with or without a tail
        assertThat(RegisterTileSizes.tailCandidates(AVX512, 4, List.of(56L, 60L), memo))
                .isEmpty();
    }

    @Test
    void aSplitWithATailCoversTheLoopWithLessThanOneTileOver() {
        FactorizationMemo memo = new FactorizationMemo();
        SplittableRandom rng = new SplittableRandom(3);
        for (long e : new long[] {7, 14, 28, 56, 112}) {
            for (int t = 1; t <= e; t++) {
                for (int levels = 1; levels <= 3; levels++) {
                    List<Integer> l = RegisterTileSizes.withInnermost(memo, e, levels, t, rng);
                    assertThat(l).hasSize(levels);
                    assertThat(l.getLast()).isEqualTo(t);
                    long q = (e + t - 1) / t, mid = 1;
                    for (int k = 0; k < levels - 1; k++) mid *= l.get(k);
                    assertThat(q % mid).isZero();
                    long outer = (e + mid * t - 1) / (mid * t);
                    assertThat(outer * mid * t).isGreaterThanOrEqualTo(e).isLessThan(e + t);
                }
            }
        }
        try {
            RegisterTileSizes.withInnermost(memo, 7, 2, 8, rng);
            throw new AssertionError("an innermost tile larger than the loop must be refused");
        } catch (dev.kiln.ir.KilnException expected) {
            assertThat(expected.getMessage()).contains("innermost tile 8").contains("extent 7");
        }
    }

    @Test
    void sampledProgramsWithTailsAreCorrectAndRoundTrip() {
        int conv = checkTails(Workloads.conv2dNhwcRelu(1, 10, 10, 4, 16, 3), 16);
        int matmul = checkTails(Workloads.matmul(30, 32, 12), 16);
        assertThat(conv).isGreaterThan(4);
        assertThat(matmul).isGreaterThan(4);
    }

    /** Samples with every register tile drawn with a tail; checks those programs; returns how many had a tail. */
    private static int checkTails(ComputeDAG dag, int n) {
        SearchTask task = Workloads.task(dag);
        InitFillTileSize fill = new InitFillTileSize(new FactorizationMemo(), 1.0, 1.0);
        InitPopulation sampler = new InitPopulation(
                task,
                TargetRules.cpu().sketches(task),
                TargetRules.cpu().initRules(),
                fill,
                InitPopulation.DEFAULT_MAX_FRUITLESS_DRAWS);
        List<Candidate> cs = sampler.sample(n, new SplittableRandom(21)).candidates();
        List<NDArray> inputs = new ArrayList<>();
        for (int i = 0; i < dag.inputs().size(); i++) {
            Tensor t = dag.inputs().get(i);
            inputs.add(NDArray.random(t.dtype(), 40 + i, t.shape().toArray()));
        }
        NDArray want = run(LowerDefault.lower("ref", dag), dag, inputs);
        int withTail = 0;
        for (Candidate c : cs) {
            boolean tail = false;
            for (Step s : c.schedule().steps()) {
                tail |= s instanceof SplitStep sp
                        && sp.extent() != null
                        && sp.extent() % sp.lengths().getLast() != 0;
            }
            if (!tail) continue;
            withTail++;
            Comparison cmp =
                    run(Lowering.lower("tail", c.schedule()), dag, inputs).compareTo(want, 1e-4, 1e-4);
            assertThat(cmp.ok()).as(c.key() + "\n" + cmp.report()).isTrue();
            Schedule back = Schedule.fromJson(c.schedule().toJson(), dag);
            assertThat(back.steps()).isEqualTo(c.schedule().steps());
            assertThat(Candidate.of(back).key()).isEqualTo(c.key());
        }
        return withTail;
    }

    private static NDArray run(dev.kiln.tir.PrimFunc f, ComputeDAG dag, List<NDArray> inputs) {
        Tensor out = dag.outputs().getFirst();
        NDArray o = NDArray.allocate(out.dtype(), out.shape().toArray());
        List<NDArray> args = new ArrayList<>(inputs);
        args.add(o);
        Interpreter.run(f, args.toArray(NDArray[]::new));
        return o;
    }
}
