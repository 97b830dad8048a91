package dev.kiln.autoschedule.annotate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeDAG;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * {@link ReductionTileSizes} and its draw in {@link InitFillTileSize}: the blocks are exactly the divisor
 * combinations with a product of 128-384 (against a brute-force enumeration), only for reductions of 256 or more;
 * with probability 1 every tiled stage of a large reduction gets one, and the programs compute what the default
 * lowering computes (interpreter, seeded random inputs, float32 rtol and atol 1e-4); with probability 0, and for
 * small reductions by default, the draw is Ansor's (innermost tiles of at most 64) and the same seed gives the
 * same programs as before the rule.
 */
class ReductionTileSizesTest {
    static final FactorizationMemo MEMO = new FactorizationMemo();

    /** Brute force: every divisor combination with a product in the band, printed. */
    static TreeSet<String> bruteForce(long... extents) {
        TreeSet<String> out = new TreeSet<>();
        int[] tile = new int[extents.length];
        brute(extents, tile, 0, out);
        return out;
    }

    private static void brute(long[] extents, int[] tile, int axis, TreeSet<String> out) {
        if (axis == extents.length) {
            long p = 1;
            for (int t : tile) p *= t;
            if (p >= 128 && p <= 384) out.add(java.util.Arrays.toString(tile));
            return;
        }
        for (int d = 1; d <= extents[axis]; d++) {
            if (extents[axis] % d != 0) continue;
            tile[axis] = d;
            brute(extents, tile, axis + 1, out);
        }
    }

    static TreeSet<String> printed(List<int[]> tiles) {
        TreeSet<String> out = new TreeSet<>();
        for (int[] t : tiles) out.add(java.util.Arrays.toString(t));
        assertThat(out).hasSize(tiles.size()); // no combination twice
        return out;
    }

    @Test
    void blocksAreTheDivisorCombinationsOf128To384() {
        assertThat(printed(ReductionTileSizes.candidates(List.of(1024L), MEMO))).containsExactly("[128]", "[256]");
        assertThat(printed(ReductionTileSizes.candidates(List.of(1152L), MEMO)))
                .isEqualTo(bruteForce(1152))
                .contains("[128]", "[384]");
        // a conv's rc, ry, rx
        assertThat(printed(ReductionTileSizes.candidates(List.of(64L, 3L, 3L), MEMO)))
                .isEqualTo(bruteForce(64, 3, 3))
                .contains("[32, 3, 3]", "[64, 3, 1]", "[16, 3, 3]")
                .doesNotContain("[64, 3, 3]");
        assertThat(printed(ReductionTileSizes.candidates(List.of(512L, 7L, 7L), MEMO)))
                .isEqualTo(bruteForce(512, 7, 7));
    }

    @Test
    void smallReductionsHaveNoBlock() {
        assertThat(ReductionTileSizes.candidates(List.of(64L), MEMO)).isEmpty();
        assertThat(ReductionTileSizes.candidates(List.of(200L), MEMO)).isEmpty(); // under 256
        assertThat(ReductionTileSizes.candidates(List.of(16L, 3L, 3L), MEMO)).isEmpty(); // 144
        assertThat(printed(ReductionTileSizes.candidates(List.of(32L, 3L, 3L), MEMO)))
                .isEqualTo(bruteForce(32, 3, 3)); // 288
    }

    @Test
    void splitWithInnermostKeepsTheExtent() {
        SplittableRandom rng = new SplittableRandom(3);
        for (int i = 0; i < 20; i++) {
            List<Integer> l = ReductionTileSizes.withInnermost(MEMO, 1024, 3, 256, rng);
            assertThat(l).hasSize(3).endsWith(256);
            assertThat(1024 % (l.get(0) * l.get(1) * 256)).isZero();
        }
        assertThat(ReductionTileSizes.withInnermost(MEMO, 1024, 1, 128, rng)).containsExactly(128);
        assertThatThrownBy(() -> ReductionTileSizes.withInnermost(MEMO, 1024, 1, 384, rng))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("384");
        assertThatThrownBy(() -> new InitFillTileSize(MEMO, 0.5, 0.25, 2))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("reductionBlockProbability");
    }

    /** The product of the innermost reduction loops of the tiled reduction stage (its KC). */
    static long block(Candidate c) {
        for (Stage st : c.state().stages()) {
            if (st.isPlaceholder()
                    || !st.isTiled()
                    || st.computeOp().reduceAxes().isEmpty()) continue;
            long kc = 1;
            boolean tiled = false;
            for (Iter it : st.iters()) {
                if (it.kind() == IterKind.REDUCE && it.name().endsWith(".1")) {
                    kc *= it.extent();
                    tiled = true;
                }
            }
            if (tiled) return kc;
        }
        return -1;
    }

    static InitPopulation sampler(SearchTask task, double reductionBlockProbability) {
        TargetRules cpu = TargetRules.cpu();
        return new InitPopulation(
                task,
                cpu.sketches(task),
                cpu.initRules(),
                new InitFillTileSize(MEMO, 0.5, 0.25, reductionBlockProbability),
                InitPopulation.DEFAULT_MAX_FRUITLESS_DRAWS);
    }

    @Test
    void everyLargeReductionGetsABlockWithProbabilityOneAndComputesTheReference() {
        ComputeDAG dag = Workloads.matmul(16, 32, 512);
        SearchTask task = Workloads.task(dag);
        List<NDArray> in = new ArrayList<>();
        for (int i = 0; i < dag.inputs().size(); i++)
            in.add(NDArray.random(
                    dag.inputs().get(i).dtype(),
                    51 + i,
                    dag.inputs().get(i).shape().toArray()));
        NDArray expected = InitKBlockingTest.run(LowerDefault.lower("ref", dag), dag, in);
        List<Candidate> cs =
                sampler(task, 1).sample(24, new SplittableRandom(6)).candidates();
        assertThat(cs).hasSize(24);
        TreeSet<Long> blocks = new TreeSet<>();
        for (Candidate c : cs) {
            long kc = block(c);
            blocks.add(kc);
            assertThat(kc).as(c.key()).isIn(128L, 256L);
            Comparison cmp = InitKBlockingTest.run(Lowering.lower("kc", c.schedule()), dag, in)
                    .compareTo(expected, 1e-4, 1e-4);
            assertThat(cmp.ok()).as(c.key() + "\n" + cmp.report()).isTrue();
        }
        assertThat(blocks).containsExactly(128L, 256L);
        // with probability 0 Ansor's cap on innermost tiles holds
        for (Candidate c : sampler(task, 0).sample(24, new SplittableRandom(6)).candidates())
            assertThat(block(c)).as(c.key()).isBetween(1L, 64L);
        for (Candidate c : new InitPopulation(
                        task,
                        TargetRules.cpu().sketches(task),
                        TargetRules.cpu().initRules(),
                        new InitFillTileSize(MEMO, 0),
                        InitPopulation.DEFAULT_MAX_FRUITLESS_DRAWS)
                .sample(24, new SplittableRandom(6))
                .candidates()) assertThat(block(c)).as(c.key()).isBetween(1L, 64L);
    }

    @Test
    void aboutHalfTheLargeReductionsByDefault() {
        SearchTask task = Workloads.task(Workloads.matmul(16, 32, 512));
        int big = 0, n = 0;
        for (Candidate c :
                TargetRules.cpu().sample(task, 80, new SplittableRandom(9)).candidates()) {
            n++;
            if (block(c) >= 128) big++;
        }
        assertThat(big).isBetween(n / 4, 3 * n / 4);
    }

    @Test
    void smallReductionsSampleAsBeforeTheRule() {
        SearchTask task = Workloads.task(Workloads.matmul(64, 64, 64));
        List<String> now = TargetRules.cpu().sample(task, 30, new SplittableRandom(4)).candidates().stream()
                .map(Candidate::key)
                .toList();
        List<String> without = sampler(task, 0).sample(30, new SplittableRandom(4)).candidates().stream()
                .map(Candidate::key)
                .toList();
        assertThat(now).isEqualTo(without);
    }

    /** A Zen 5 target with AVX-512 VNNI and BF16 (as parsed from a tuning log), whatever this host has. */
    static final String ZEN5 = "cpu -mtriple=x86_64-unknown-linux-gnu -mcpu=znver5 -mattr=+avx,+avx2,+fma,+avx512f,"
            + "+avx512dq,+avx512cd,+avx512bw,+avx512vl,+avx512vnni,+avx512bf16 -cores=2 -vector-bits=512"
            + " -cache-line=64";

    /**
     * A tensorized GEMM's reduction block is drawn like float32's, in the intrinsic's k steps: the groups leave out
     * the intrinsic's own split ({@code k} by 4) and hold the tiling split of {@code k.0} (the mutation's view of the
     * logged best int8 GEMM 1024 of the quiet run kiln-bench/lowp-tail, whose Ansor draw stopped at 64 steps), and
     * with probability 1 every tensorized program sampled for {@code x[8, 1024] . w} reads 128 or 256 steps per K
     * block and is exact against plain Java (interpreter, int8).
     */
    @Test
    void aTensorizedStageDrawsItsKBlockInTheIntrinsicsSteps() throws Exception {
        dev.kiln.te.Tensor x = dev.kiln.te.Te.placeholder("x", dev.kiln.ir.DType.UINT8, 1024, 1024);
        dev.kiln.te.Tensor wp = dev.kiln.te.Te.placeholder("w_packed", dev.kiln.ir.DType.INT8, 64, 256, 16, 4);
        ComputeDAG big = ComputeDAG.of(dev.kiln.nn.LowPrecision.matmulPacked(x, wp));
        String logged = "[[\"SP\", 2, 1, 1024, [16], 1], [\"SP\", 2, 3, 1024, [4], 1],"
                + " [\"SP\", 2, 0, 1024, [4, 8, 8], 1], [\"SP\", 2, 4, 64, [2, 2, 2], 1],"
                + " [\"SP\", 2, 9, 256, [64], 1], [\"RE\", 2, [0, 4, 1, 5, 9, 2, 6, 10, 3, 7, 8, 11]],"
                + " [\"TS\", 2, 10, \"x86.avx512.vpdpbusd.16x4\"]]";
        dev.kiln.schedule.Schedule s = dev.kiln.schedule.Schedule.fromSteps(
                new com.fasterxml.jackson.databind.ObjectMapper().readTree(logged), big);
        List<ReductionTileSizes.Group> groups = ReductionTileSizes.groups(big, s.steps());
        assertThat(groups).singleElement().satisfies(g -> {
            assertThat(g.stage()).isEqualTo("matmul_packed");
            assertThat(g.splitSteps()).as("the tiling split of k.0 only").containsExactly(4);
            assertThat(g.extents()).containsExactly(256L);
            assertThat(ReductionTileSizes.block(g, s.steps())).isEqualTo(64);
        });

        int m = 8, n = 32, k = 1024;
        dev.kiln.te.Tensor xs = dev.kiln.te.Te.placeholder("x", dev.kiln.ir.DType.UINT8, m, k);
        dev.kiln.te.Tensor ws = dev.kiln.te.Te.placeholder("w_packed", dev.kiln.ir.DType.INT8, n / 16, k / 4, 16, 4);
        ComputeDAG dag = ComputeDAG.of(dev.kiln.nn.LowPrecision.matmulPacked(xs, ws));
        SearchTask task = SearchTask.of(dag, ZEN5, Workloads.FOUR_CORES);
        NDArray xa = NDArray.allocate(dev.kiln.ir.DType.UINT8, m, k);
        NDArray wa = NDArray.allocate(dev.kiln.ir.DType.INT8, n / 16, k / 4, 16, 4);
        SplittableRandom r = new SplittableRandom(61);
        for (long i = 0; i < xa.numElements(); i++) xa.setLongFlat(r.nextInt(256), i);
        for (long i = 0; i < wa.numElements(); i++) wa.setLongFlat(r.nextInt(256) - 128, i);
        TreeSet<Long> blocks = new TreeSet<>();
        int tensorized = 0;
        for (Candidate c : sampler(task, 1).sample(12, new SplittableRandom(7)).candidates()) {
            Stage st = c.state().stage(c.state().stageIndex("matmul_packed"));
            if (st.tensorized() == null) continue;
            tensorized++;
            long kc = st.iters().stream()
                    .filter(it -> it.name().equals("k.0.1"))
                    .mapToLong(Iter::extent)
                    .findFirst()
                    .orElseThrow();
            blocks.add(kc);
            assertThat(kc).as(c.key()).isIn(128L, 256L);
            NDArray out = NDArray.allocate(dev.kiln.ir.DType.INT32, m, n);
            dev.kiln.interp.Interpreter.run(Lowering.lower("kc", c.schedule()), xa, wa, out);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    int acc = 0;
                    for (int q = 0; q < k; q++)
                        acc += (int) xa.getLong(i, q) * (int) wa.getLong(j / 16, q / 4, j % 16, q % 4);
                    assertThat(out.getLong(i, j))
                            .as("%s out[%d, %d]", c.key(), i, j)
                            .isEqualTo(acc);
                }
        }
        assertThat(tensorized).as("tensorized programs sampled").isGreaterThanOrEqualTo(6);
        assertThat(blocks).containsExactly(128L, 256L);
    }
}
