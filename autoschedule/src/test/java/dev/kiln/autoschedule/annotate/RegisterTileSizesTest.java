package dev.kiln.autoschedule.annotate;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.InferBound;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.nn.Conv;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Register-tile-aware tile sizes: which stages, which tiles, and how often the sampler draws them. */
class RegisterTileSizesTest {
    private static final HardwareParams AVX512 = HardwareParams.cpu(2, 64, 64);
    private static final HardwareParams AVX2 = HardwareParams.cpu(2, 32, 64);

    @Test
    void registersFollowTheVectorWidth() {
        assertThat(AVX512.vectorRegisters()).isEqualTo(32);
        assertThat(AVX2.vectorRegisters()).isEqualTo(16);
        assertThat(AVX512.lanes(4)).isEqualTo(16);
        assertThat(AVX2.lanes(4)).isEqualTo(8);
    }

    @Test
    void fitLeavesRoomForTheLoadedVectorsAndHidesLatency() {
        // AVX-512: 8 x 2 vectors (16 accumulators) and 6 x 4 (24) fit, 8 x 4 (32) does not, 2 x 2 is too few
        assertThat(RegisterTileSizes.fits(AVX512, 8, 2)).isTrue();
        assertThat(RegisterTileSizes.fits(AVX512, 6, 4)).isTrue();
        assertThat(RegisterTileSizes.fits(AVX512, 8, 4)).isFalse();
        assertThat(RegisterTileSizes.fits(AVX512, 2, 2)).isFalse();
        // AVX2: the classic 6 x 2 (12 of 16 registers)
        assertThat(RegisterTileSizes.fits(AVX2, 6, 2)).isTrue();
        assertThat(RegisterTileSizes.fits(AVX2, 8, 2)).isFalse();
    }

    @Test
    void candidatesOfGemm1024AreFullVectorsThatFit() {
        List<int[]> c = RegisterTileSizes.candidates(AVX512, 4, List.of(1024L, 1024L), new FactorizationMemo());
        assertThat(c).isNotEmpty();
        List<String> tiles = new ArrayList<>();
        for (int[] t : c) {
            assertThat(t[1] % 16).isZero();
            assertThat(RegisterTileSizes.fits(AVX512, t[0], t[1] / 16)).isTrue();
            tiles.add(t[0] + "x" + t[1]);
        }
        // powers of two only (exact divisors of 1024): 16 accumulators at most once the vectors are counted
        assertThat(tiles).containsExactly("8x16", "16x16", "4x32", "8x32", "2x64", "4x64");
    }

    @Test
    void noCandidateWhenTheVectorAxisIsNotAMultipleOfHalfTheLanes() {
        assertThat(RegisterTileSizes.candidates(AVX512, 4, List.of(64L, 60L), new FactorizationMemo()))
                .isEmpty();
        assertThat(RegisterTileSizes.innermost(
                        AVX512, 4, List.of(64L, 60L), new FactorizationMemo(), new SplittableRandom(1)))
                .isNull();
    }

    @Test
    void aVectorAxisOfHalfVectorsTakesRowsOfAZmmAndAYmm() {
        // 24 output channels (MobileNet-V2's 1x1 project convs) on AVX-512: a row of 24 is two registers, one of 8
        // is one; rows x registers + registers + 1 <= 32 and at least 8 accumulators
        List<String> tiles =
                RegisterTileSizes.candidates(AVX512, 4, List.of(56L, 24L), new FactorizationMemo()).stream()
                        .map(t -> t[0] + "x" + t[1])
                        .toList();
        assertThat(tiles).containsExactly("8x8", "14x8", "28x8", "4x24", "7x24", "8x24", "14x24");
        // an axis of whole vectors keeps whole-vector tiles only
        assertThat(RegisterTileSizes.candidates(AVX512, 4, List.of(56L, 48L), new FactorizationMemo()))
                .allMatch(t -> t[1] % 16 == 0)
                .isNotEmpty();
    }

    @Test
    void groupsAreTheSpatialSplitsOfTheTiledReduction() {
        SearchTask task = SearchTask.cpu(Workloads.matmul(64, 64, 64), AVX512);
        for (Sketch sk : TargetRules.cpu().sketches(task)) {
            List<RegisterTileSizes.Group> g = RegisterTileSizes.groups(task.dag(), sk);
            assertThat(g).hasSize(1);
            assertThat(g.getFirst().stage()).isIn("matmul", "matmul.local");
            assertThat(g.getFirst().elementBytes()).isEqualTo(4);
            assertThat(g.getFirst().splitSteps()).hasSize(2);
            for (int at : g.getFirst().splitSteps()) {
                assertThat(((SplitStep) sk.steps().get(at)).lengths()).hasSize(3);
            }
        }
    }

    @Test
    void samplerDrawsRegisterTilesAboutHalfTheTime() {
        SearchTask task = SearchTask.cpu(Workloads.matmul(1024, 1024, 1024), AVX512);
        Sketch sk = TargetRules.cpu().sketches(task).getFirst();
        List<Integer> splits =
                RegisterTileSizes.groups(task.dag(), sk).getFirst().splitSteps();
        InitFillTileSize uniform = new InitFillTileSize(new FactorizationMemo(), 0);
        InitFillTileSize aware = new InitFillTileSize(new FactorizationMemo());
        int draws = 2000;
        int inUniform = countFitting(uniform, task, sk, splits, draws),
                inAware = countFitting(aware, task, sk, splits, draws);
        assertThat(inUniform).isLessThan(draws / 10);
        assertThat(inAware).isGreaterThan(draws * 4 / 10);
    }

    private static int countFitting(
            InitFillTileSize fill, SearchTask task, Sketch sk, List<Integer> splits, int draws) {
        SplittableRandom rng = new SplittableRandom(11);
        int n = 0;
        for (int d = 0; d < draws; d++) {
            List<Step> steps = fill.fill(task, sk, rng);
            int rows = ((SplitStep) steps.get(splits.get(0))).lengths().getLast();
            int cols = ((SplitStep) steps.get(splits.get(1))).lengths().getLast();
            if (cols % 16 == 0 && RegisterTileSizes.fits(task.hardware(), rows, cols / 16)) n++;
        }
        return n;
    }

    @Test
    void sameSeedSameTiles() {
        SearchTask task = SearchTask.cpu(Workloads.matmul(512, 512, 512), AVX512);
        Sketch sk = TargetRules.cpu().sketches(task).getFirst();
        InitFillTileSize fill = new InitFillTileSize(new FactorizationMemo());
        for (int seed = 0; seed < 5; seed++) {
            assertThat(fill.fill(task, sk, new SplittableRandom(seed)))
                    .isEqualTo(fill.fill(task, sk, new SplittableRandom(seed)));
        }
    }

    @Test
    void convolutionRowsMultiplyOverItsOuterSpatialLoops() {
        var data = Te.placeholder("data", FLOAT32, 1, 14, 14, 64);
        var weight = Te.placeholder("weight", FLOAT32, 3, 3, 64, 64);
        SearchTask task = SearchTask.cpu(ComputeDAG.of(Conv.conv2dNhwc(data, weight, 1, 1)), AVX512);
        FactorizationMemo memo = new FactorizationMemo();
        for (int[] t : RegisterTileSizes.candidates(AVX512, 4, List.of(1L, 14L, 14L, 64L), memo)) {
            assertThat(t[3] % 16).isZero();
            assertThat(RegisterTileSizes.fits(AVX512, (long) t[0] * t[1] * t[2], t[3] / 16))
                    .isTrue();
        }
        boolean some = false;
        for (Sketch sk : TargetRules.cpu().sketches(task)) {
            for (RegisterTileSizes.Group g : RegisterTileSizes.groups(task.dag(), sk))
                some |= g.splitSteps().size() == 4;
        }
        assertThat(some).isTrue();
    }

    @Test
    void vectorisationCoversRegisterTileRowsWiderThanOneVector() {
        // Ansor's limit is 16 elements; 32 and 64 are two and four zmm vectors of float32 and are vectorised too
        for (int j3 : new int[] {16, 32, 64}) {
            Iter last = innermostAfterVectorization(SearchTask.cpu(Workloads.matmul(64, 64, 64), AVX512), j3);
            assertThat(last.annotation()).as("j.3 = " + j3).isEqualTo(IterAnnotation.VECTORIZE);
            assertThat(last.extent()).isEqualTo((long) j3);
        }
        // Ansor's rule alone leaves a 32-wide row to LLVM
        assertThat(innermostAfterVectorization(
                                SearchTask.cpu(Workloads.matmul(64, 64, 64), AVX512), 32, InitVectorization.ansor())
                        .annotation())
                .isEqualTo(IterAnnotation.NONE);
        // AVX2 (8 lanes): 24 is three vectors; 20 is longer than Ansor's 16 and not whole vectors: it stays a loop
        SearchTask avx2 = SearchTask.cpu(Workloads.matmul(48, 48, 48), AVX2);
        assertThat(innermostAfterVectorization(avx2, 24).annotation()).isEqualTo(IterAnnotation.VECTORIZE);
        SearchTask odd = SearchTask.cpu(Workloads.matmul(40, 40, 40), AVX2);
        assertThat(innermostAfterVectorization(odd, 20).annotation()).isEqualTo(IterAnnotation.NONE);
        // AVX-512: 24 is a zmm and a ymm (half vectors, as the register tiles take them); 20 is not
        assertThat(innermostAfterVectorization(SearchTask.cpu(Workloads.matmul(48, 48, 48), AVX512), 24)
                        .annotation())
                .isEqualTo(IterAnnotation.VECTORIZE);
        assertThat(innermostAfterVectorization(SearchTask.cpu(Workloads.matmul(40, 40, 40), AVX512), 20)
                        .annotation())
                .isEqualTo(IterAnnotation.NONE);
    }

    /**
     * The innermost loop of the tiled matmul (Ansor's first sketch, i = [2, 1, 4], j = [1, 1, j3], k.1 = 8) after
     * InitVectorization.
     */
    private static Iter innermostAfterVectorization(SearchTask task, int j3) {
        return innermostAfterVectorization(task, j3, new InitVectorization());
    }

    private static Iter innermostAfterVectorization(SearchTask task, int j3, InitVectorization rule) {
        List<Step> steps =
                new ArrayList<>(TargetRules.ansorCpu().sketches(task).getFirst().steps());
        boolean first = true;
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i) instanceof SplitStep sp && !sp.isConcrete()) {
                List<Integer> l = sp.lengths().size() == 1 ? List.of(8) : first ? List.of(2, 1, 4) : List.of(1, 1, j3);
                if (sp.lengths().size() == 3) first = false;
                steps.set(i, sp.withLengths(l));
            }
        }
        LoopState state = InferBound.apply(new Schedule(task.dag(), steps).replay());
        return rule.apply(task, state, new SplittableRandom(1)).stage(2).iters().getLast();
    }
    /**
     * A tensorized stage (here the best int8 GEMM 1024 of a quiet run, a 4 x 2 tile of vpdpbusd):
     * its vector axis is the intrinsic's outer part, one whole 16 x int32 accumulator per element,
     * so its register tiles count vectors, not lanes: 4 x 2, 8 x 2, 4 x 4 accumulators, not
     * 8 x 16 "lanes" (128 registers).
     */
    @Test
    void aTensorizedStageCountsWholeAccumulatorVectors() throws Exception {
        dev.kiln.te.Tensor x = Te.placeholder("x", dev.kiln.ir.DType.UINT8, 1024, 1024);
        dev.kiln.te.Tensor wp = Te.placeholder("w_packed", dev.kiln.ir.DType.INT8, 64, 256, 16, 4);
        ComputeDAG dag = ComputeDAG.of(dev.kiln.nn.LowPrecision.matmulPacked(x, wp));
        String steps = "[[\"SP\", 2, 1, 1024, [16], 1], [\"SP\", 2, 3, 1024, [4], 1],"
                + " [\"SP\", 2, 0, 1024, [16, 16, 4], 1], [\"SP\", 2, 4, 64, [1, 32, 2], 1],"
                + " [\"SP\", 2, 9, 256, [64], 1], [\"RE\", 2, [0, 4, 1, 5, 9, 2, 6, 10, 3, 7, 8, 11]],"
                + " [\"TS\", 2, 10, \"x86.avx512.vpdpbusd.16x4\"]]";
        Schedule s = Schedule.fromSteps(new com.fasterxml.jackson.databind.ObjectMapper().readTree(steps), dag);
        List<RegisterTileSizes.Group> g = RegisterTileSizes.groups(dag, s.steps());
        assertThat(g).hasSize(1);
        assertThat(g.getFirst().elementBytes())
                .as("one int32 x 16 accumulator per element")
                .isEqualTo(64);
        List<String> tiles = new ArrayList<>();
        for (int[] t : RegisterTileSizes.candidates(
                AVX512, g.getFirst().elementBytes(), List.of(1024L, 64L), new FactorizationMemo())) {
            assertThat(RegisterTileSizes.fits(AVX512, t[0], t[1])).isTrue();
            tiles.add(t[0] + "x" + t[1]);
        }
        assertThat(tiles).contains("4x2", "8x2", "4x4", "16x1", "8x1").doesNotContain("8x4", "2x2", "8x16");
    }

    /**
     * A 16-bit float stage's register tile is counted in the registers it runs in: float16 in half registers (32
     * lanes a zmm) only on a target with AVX-512 FP16, float32 registers (16 lanes) otherwise, bfloat16 always in
     * float32 registers. Without this a 32-wide float16 row would be counted one accumulator where it is two.
     */
    @Test
    void sixteenBitFloatStagesCountTheRegistersTheyRunIn() {
        var noFp16 = dev.kiln.target.Target.cpu().withCpu("skylake-avx512", "+avx2,+fma,+f16c,+avx512f,+avx512bw");
        var fp16 = dev.kiln.target.Target.cpu()
                .withCpu("sapphirerapids", "+avx2,+fma,+f16c,+avx512f,+avx512bw," + "+avx512vl,+avx512fp16");
        for (var dt : List.of(dev.kiln.ir.DType.FLOAT16, dev.kiln.ir.DType.BFLOAT16)) {
            var x = Te.placeholder("x", dt, 64, 128);
            var w = Te.placeholder("w", dt, 128, 64);
            ComputeDAG dag = ComputeDAG.of(dev.kiln.nn.Linalg.matmul(x, w));
            Sketch sk = TargetRules.cpu().sketches(SearchTask.of(dag, fp16)).getFirst();
            List<RegisterTileSizes.Group> g = RegisterTileSizes.groups(dag, sk);
            assertThat(g).hasSize(1);
            assertThat(g.getFirst().elementBytes()).isEqualTo(2);
            assertThat(g.getFirst().registerBytes(noFp16))
                    .as("%s without avx512fp16", dt)
                    .isEqualTo(4);
            assertThat(g.getFirst().registerBytes(fp16))
                    .as("%s with avx512fp16", dt)
                    .isEqualTo(dt == dev.kiln.ir.DType.FLOAT16 ? 2 : 4);
        }
        // in float32 registers a row of 32 float16 is two accumulators: 8 such rows do not fit with their loads
        assertThat(RegisterTileSizes.candidates(AVX512, 4, List.of(64L, 64L), new FactorizationMemo()))
                .noneMatch(t -> t[0] == 16 && t[1] == 32);
        assertThat(RegisterTileSizes.candidates(AVX512, 2, List.of(64L, 64L), new FactorizationMemo()))
                .anyMatch(t -> t[0] == 16 && t[1] == 32);
    }

    /**
     * The same tensorized stage takes row tails (1024 rows in tiles of 6, 12 or 14, as oneDNN's
     * brgemm does) within the register budget (accumulators + B vectors + 1 broadcast <= 32), the
     * vector axis still exact: 6 x 4 (29 registers), 12 x 2 (27), 14 x 2 (31), not 7 x 4 (33).
     */
    @Test
    void aTensorizedStageTakesRowTailsWithinTheRegisterBudget() {
        List<String> tails = new ArrayList<>();
        for (int[] t : RegisterTileSizes.tailCandidates(AVX512, 64, List.of(1024L, 64L), new FactorizationMemo())) {
            assertThat(1024 % t[0]).as("the row tile leaves a tail").isNotZero();
            assertThat(64 % t[1]).as("the vector tile divides").isZero();
            assertThat(t[0] * t[1] + t[1] + 1)
                    .as("registers of " + t[0] + "x" + t[1])
                    .isLessThanOrEqualTo(32);
            tails.add(t[0] + "x" + t[1]);
        }
        assertThat(tails).contains("6x4", "12x2", "14x2", "3x4", "10x1").doesNotContain("7x4", "15x2", "4x2");
    }
}
