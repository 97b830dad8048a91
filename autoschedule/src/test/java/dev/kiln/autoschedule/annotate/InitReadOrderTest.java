package dev.kiln.autoschedule.annotate;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.interp.Interpreter;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Schedule;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The read-order rule: a transposing copy reads its source contiguously; other stages keep their order. */
class InitReadOrderTest {

    private static List<String> loops(LoopState s, String stage) {
        return s.stage(s.stageIndex(stage)).iters().stream().map(Iter::name).toList();
    }

    private static LoopState apply(ComputeDAG dag) {
        SearchTask task = Workloads.task(dag);
        return new InitReadOrder().apply(task, LoopState.initial(dag), new SplittableRandom(1));
    }

    private static void assertSameResult(ComputeDAG dag, LoopState s, long... inShape) {
        long[] outShape = dag.outputs().get(0).shape().dims().stream()
                .mapToLong(Long::longValue)
                .toArray();
        NDArray in = NDArray.random(FLOAT32, 7, inShape);
        NDArray expected = NDArray.allocate(FLOAT32, outShape), got = NDArray.allocate(FLOAT32, outShape);
        Interpreter.run(LowerDefault.lower("ref", dag), in, expected);
        Interpreter.run(Lowering.lower("t", new Schedule(dag, s.steps())), in, got);
        assertThat(got.compareTo(expected, 0, 0).ok()).isTrue();
    }

    @Test
    void aTransposeReadsItsSourceAlongTheInnermostLoop() {
        Tensor x = Te.placeholder("X", FLOAT32, 2, 24, 40);
        // T[b, i, j] = X[b, j, i] (loops named i, j, k): in the output's order the innermost k reads X 40 floats
        // apart; 40 and 24 do not divide by a cache line's 16 floats, so the stage is reordered, not blocked
        Tensor t = Te.compute("T", Te.shape(2, 40, 24), (b, i, j) -> x.at(b, j, i));
        ComputeDAG dag = ComputeDAG.of(t);
        LoopState s = apply(dag);
        assertThat(loops(s, "T")).containsExactly("i", "k", "j");
        assertSameResult(dag, s, 2, 24, 40);
    }

    @Test
    void aLongTranspositionIsCopiedInBlocksOfACacheLine() {
        Tensor x = Te.placeholder("X", FLOAT32, 64, 3, 48);
        // T[h, d, l] = X[l, h, d] (loops i, j, k): j reads X contiguously, k writes T contiguously; both are longer
        // than a 64-byte line of floats and divide by it, so the copy runs in 16 x 16 blocks, writes innermost
        Tensor t = Te.compute("T", Te.shape(3, 48, 64), (h, d, l) -> x.at(l, h, d));
        ComputeDAG dag = ComputeDAG.of(t);
        SearchTask task = Workloads.task(dag);
        assertThat(task.hardware().cacheLineBytes()).isEqualTo(64);
        LoopState s = apply(dag);
        assertThat(loops(s, "T")).containsExactly("i", "k.0", "j.0", "j.1", "k.1");
        var iters = s.stage(s.stageIndex("T")).iters();
        assertThat(iters.stream().map(Iter::extent).toList()).containsExactly(3L, 4L, 3L, 16L, 16L);
        assertSameResult(dag, s, 64, 3, 48);
        // a short reading loop (16: one block) leaves the stage reordered only
        Tensor y = Te.placeholder("Y", FLOAT32, 64, 3, 16);
        ComputeDAG shortDag = ComputeDAG.of(Te.compute("U", Te.shape(3, 16, 64), (h, d, l) -> y.at(l, h, d)));
        assertThat(loops(apply(shortDag), "U")).containsExactly("i", "k", "j");
    }

    @Test
    void contiguousBroadcastAndReducingStagesKeepTheirOrder() {
        Tensor x = Te.placeholder("X", FLOAT32, 48, 64);
        Tensor v = Te.placeholder("V", FLOAT32, 48);
        // element-wise (contiguous already), a broadcast along the inner loop, a matmul (reduces)
        ComputeDAG copy = ComputeDAG.of(
                Te.compute("C", Te.shape(48, 64), (i, j) -> x.at(i, j).mul(2f)));
        ComputeDAG broadcast = ComputeDAG.of(Te.compute("B", Te.shape(48, 64), (i, j) -> v.at(i)));
        assertThat(loops(apply(copy), "C")).containsExactly("i", "j");
        assertThat(loops(apply(broadcast), "B")).containsExactly("i", "j");
        ComputeDAG mm = Workloads.matmul(32, 32, 32);
        assertThat(apply(mm).steps()).isEmpty();
    }

    @Test
    void theSampledAttentionProgramsReadValueContiguously() {
        ComputeDAG dag = Workloads.attention(1, 32, 2, 16);
        SearchTask task = Workloads.task(dag);
        var rules = dev.kiln.autoschedule.search.TargetRules.cpu();
        var res = rules.population(task, rules.sketches(task)).sample(16, new SplittableRandom(2));
        int reordered = 0;
        for (var c : res.candidates()) {
            LoopState s = c.state();
            List<String> l = loops(s, "value_T");
            // value_T[b, h, d, l] = value[b, l, h, d]: d (k here) reads value contiguously
            String last = l.get(l.size() - 1);
            if (last.equals("k") || last.endsWith("@k@")) reordered++;
        }
        assertThat(reordered).isPositive();
    }
}
