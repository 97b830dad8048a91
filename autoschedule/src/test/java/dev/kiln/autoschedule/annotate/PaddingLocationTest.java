package dev.kiln.autoschedule.annotate;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.autoschedule.mutation.Children;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.transfer.ScheduleTransfer;
import dev.kiln.interp.Interpreter;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.Pool;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ReorderStep;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Where the random annotation puts a padding stage ({@link InitChangeComputeLocation#keepsOffRoot}): the padded input
 * of a depthwise conv or a pooling, read without reuse, is computed inside its consumer, never copied whole at root
 * (nor inlined); a conv's padded input, read once per output channel, may still be. Every sampled program is run in
 * the interpreter against the default lowering on seeded random inputs, within rtol 1e-5 and atol 1e-5 (tiling may
 * reorder the nine-term float32 sums; values of magnitude about 1).
 */
class PaddingLocationTest {

    private static Map<ComputeAtKind, Integer> padLocations(ComputeDAG dag, int n, long seed) {
        return padLocations(TargetRules.cpu(), dag, n, seed);
    }

    private static Map<ComputeAtKind, Integer> padLocations(TargetRules rules, ComputeDAG dag, int n, long seed) {
        SearchTask task = Workloads.task(dag);
        var res = rules.population(task, rules.sketches(task)).sample(n, new SplittableRandom(seed));
        assertThat(res.candidates()).isNotEmpty();
        Map<ComputeAtKind, Integer> where = new EnumMap<>(ComputeAtKind.class);
        for (Candidate c : res.candidates()) {
            LoopState s = c.state();
            where.merge(s.stage(s.stageIndex("pad")).computeAt(), 1, Integer::sum);
        }
        return where;
    }

    private static ComputeDAG depthwise() {
        Tensor data = Te.placeholder("data", FLOAT32, 1, 6, 6, 16);
        Tensor weight = Te.placeholder("weight", FLOAT32, 3, 3, 16, 1);
        return ComputeDAG.of(Activation.relu(Conv.depthwiseConv2dNhwc(data, weight, 1, 1)));
    }

    @Test
    void aDepthwiseConvsPaddingIsComputedInsideIt() {
        Map<ComputeAtKind, Integer> where = padLocations(depthwise(), 60, 3);
        assertThat(where.keySet()).containsExactly(ComputeAtKind.ITER);
        // Ansor's rule (its CPU space, for comparisons) keeps its draw: root included, never inlined from root
        Map<ComputeAtKind, Integer> ansor = padLocations(TargetRules.ansorCpu(), depthwise(), 60, 3);
        assertThat(ansor).containsKey(ComputeAtKind.ROOT).doesNotContainKey(ComputeAtKind.INLINED);
    }

    @Test
    void aPoolingsPaddingIsNeverCopiedWholeAtRoot() {
        Tensor data = Te.placeholder("data", FLOAT32, 1, 8, 8, 16);
        ComputeDAG pool = ComputeDAG.of(Pool.maxPool2dNhwc(data, 3, 2, 1));
        assertThat(padLocations(pool, 30, 4)).doesNotContainKey(ComputeAtKind.ROOT);
    }

    @Test
    void aConvsPaddingMayStillBeComputedAtRoot() {
        // conv2d reads pad[n, h + rh, w + rw, rc] for every output channel: reuse, so Ansor's draw is kept
        assertThat(padLocations(Workloads.conv2dNhwcRelu(1, 6, 6, 8, 16, 3), 60, 5))
                .containsKey(ComputeAtKind.ROOT);
    }

    @Test
    void readsWithoutReuseAreTheOnesThatUseEverySpatialAxis() {
        LoopState dw = LoopState.initial(depthwise());
        LoopState conv = LoopState.initial(Workloads.conv2dNhwcRelu(1, 6, 6, 8, 16, 3));
        AccessAnalyzer a = AccessAnalyzer.of(dw), b = AccessAnalyzer.of(conv);
        int dwPad = dw.stageIndex("pad"), convPad = conv.stageIndex("pad");
        assertThat(StagePredicates.isReadWithoutReuse(a, dw, dwPad, StagePredicates.singleConsumerId(dw, dwPad)))
                .isTrue();
        assertThat(StagePredicates.isReadWithoutReuse(
                        b, conv, convPad, StagePredicates.singleConsumerId(conv, convPad)))
                .isFalse();
        // the weight is read without the spatial axes h and w: reuse
        int w = dw.stageIndex("weight");
        assertThat(StagePredicates.isReadWithoutReuse(a, dw, w, StagePredicates.singleConsumerId(dw, w)))
                .isFalse();
    }

    /**
     * The depthwise conv of {@link #depthwise} (stage 3; its padding is stage 1) tiled SSRSRS with its rows and columns
     * wholly in the second level (the outermost loops i.0, j.0, k.0 of extent 1, as a tile-size mutation can leave
     * them), its 16 channels split 2 x 8 at the outermost level, and the padding computed at loop {@code padAt}.
     */
    private static List<Step> tiledDepthwise(int padAt) {
        return List.of(
                new SplitStep(3, 0, 1L, List.of(1, 1, 1), true),
                new SplitStep(3, 4, 6L, List.of(6, 1, 1), true),
                new SplitStep(3, 8, 6L, List.of(6, 1, 1), true),
                new SplitStep(3, 12, 16L, List.of(8, 1, 1), true),
                new SplitStep(3, 16, 3L, List.of(3), true),
                new SplitStep(3, 18, 3L, List.of(3), true),
                new ReorderStep(3, List.of(0, 4, 8, 12, 1, 5, 9, 13, 16, 18, 2, 6, 10, 14, 17, 19, 3, 7, 11, 15)),
                new ComputeAtStep(1, 3, padAt));
    }

    @Test
    void aChildThatPadsTheWholeInputAtOnceIsRefused() {
        ComputeDAG dag = depthwise();
        SearchTask task = Workloads.task(dag);
        // at j.0, inside loops of extent 1 only: the whole 8x8x16 padded input at once, though l.0 runs twice
        Candidate whole = Candidate.of(dag, tiledDepthwise(1));
        int pad = whole.state().stageIndex("pad");
        assertThat(pad).isEqualTo(1);
        assertThat(StagePredicates.enclosingTrips(whole.state(), pad)).isEqualTo(1);
        assertThat(InitChangeComputeLocation.padsWholeInputAtOnce(whole.state()))
                .isTrue();
        assertThat(Children.of(task, whole.schedule().steps())).isNull();
        assertThat(ScheduleTransfer.adapt(whole.schedule(), task, false)).isEmpty();
        // at l.0: half the channels at a time, taken
        Candidate half = Candidate.of(dag, tiledDepthwise(3));
        assertThat(StagePredicates.enclosingTrips(half.state(), pad)).isEqualTo(2);
        assertThat(InitChangeComputeLocation.padsWholeInputAtOnce(half.state())).isFalse();
        assertThat(Children.of(task, half.schedule().steps())).isNotNull();
        assertThat(ScheduleTransfer.adapt(half.schedule(), task, false)).isPresent();
        // and the sampler never draws such a program
        TargetRules rules = TargetRules.cpu();
        for (Candidate c : rules.population(task, rules.sketches(task))
                .sample(40, new SplittableRandom(7))
                .candidates()) {
            assertThat(InitChangeComputeLocation.padsWholeInputAtOnce(c.state()))
                    .as("%s", c.schedule())
                    .isFalse();
        }
    }

    @Test
    void aStageAtRootRunsOnceAndAConvsPaddingAtRootIsNotRefused() {
        LoopState dw = LoopState.initial(depthwise());
        assertThat(StagePredicates.enclosingTrips(dw, dw.stageIndex("pad"))).isEqualTo(1);
        // the initial state has every stage at root; the depthwise padding has a location inside the conv
        assertThat(InitChangeComputeLocation.padsWholeInputAtOnce(dw)).isTrue();
        // a conv reuses its padded input: computing it whole is one of Ansor's choices, not refused
        assertThat(InitChangeComputeLocation.padsWholeInputAtOnce(
                        LoopState.initial(Workloads.conv2dNhwcRelu(1, 6, 6, 8, 16, 3))))
                .isFalse();
    }

    @Test
    void everySampledDepthwiseProgramComputesTheReference() {
        ComputeDAG dag = depthwise();
        SearchTask task = Workloads.task(dag);
        TargetRules rules = TargetRules.cpu();
        var res = rules.population(task, rules.sketches(task)).sample(40, new SplittableRandom(6));
        NDArray data = NDArray.random(FLOAT32, 11, 1, 6, 6, 16), weight = NDArray.random(FLOAT32, 12, 3, 3, 16, 1);
        NDArray expected = NDArray.allocate(FLOAT32, 1, 6, 6, 16);
        Interpreter.run(LowerDefault.lower("ref", dag), data, weight, expected);
        for (Candidate c : res.candidates()) {
            NDArray got = NDArray.allocate(FLOAT32, 1, 6, 6, 16);
            Interpreter.run(Lowering.lower("sampled", c.schedule()), data, weight, got);
            assertThat(got.compareTo(expected, 1e-5, 1e-5).ok())
                    .as(c.schedule().toJavaSource())
                    .isTrue();
        }
    }
}
