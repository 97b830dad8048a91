package dev.kiln.autoschedule.annotate;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.interp.Interpreter;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.Pool;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.EnumMap;
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
