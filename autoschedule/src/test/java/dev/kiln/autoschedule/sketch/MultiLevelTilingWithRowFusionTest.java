package dev.kiln.autoschedule.sketch;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.interp.Interpreter;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Norm;
import dev.kiln.nn.Softmax;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The row-fusion sketch rule: where it applies, the block it builds, and that its programs compute the reference. */
class MultiLevelTilingWithRowFusionTest {

    private static List<Sketch> rowFused(List<Sketch> sketches) {
        return sketches.stream()
                .filter(k -> {
                    LoopState s = k.state();
                    if (s.stages().stream().noneMatch(st -> st.name().equals("scores"))) return false;
                    int scores = s.stageIndex("scores");
                    return s.stage(scores).computeAt() == ComputeAtKind.ITER
                            && s.stage(s.stage(scores).attachStage()).name().equals("softmax");
                })
                .toList();
    }

    /** The row-fused sketches whose scores are summed in a cache-write stage computed inside the copy's tile. */
    private static List<Sketch> cached(List<Sketch> sketches) {
        return rowFused(sketches).stream()
                .filter(k ->
                        k.state().stages().stream().anyMatch(st -> st.name().equals("scores.local")))
                .toList();
    }

    @Test
    void attentionGetsOneRowFusedSketchPerReductionVariant() {
        SearchTask task = Workloads.task(Workloads.attention(1, 32, 2, 16));
        List<Sketch> all = TargetRules.cpu().sketches(task);
        List<Sketch> fused = rowFused(all);
        // max and sum each with or without one of two rfactors: 9 states reach the scores, each gets one fused
        // sketch without a cache write and one with, which AddCacheReadPack then offers with and without a packed
        // copy of value_T
        assertThat(fused).hasSize(36);
        assertThat(cached(all)).hasSize(18);
        for (Sketch k : cached(all)) {
            LoopState s = k.state();
            // the copy follows the first three of the local stage's four spatial levels, and the local stage (its whole
            // reduction over its innermost tile) is computed at the last loop of the third
            Stage local = s.stage(s.stageIndex("scores.local"));
            Stage copy = s.stage(s.stageIndex("scores"));
            assertThat(local.computeAt()).isEqualTo(ComputeAtKind.ITER);
            assertThat(s.stage(local.attachStage()).name()).isEqualTo("scores");
            assertThat(copy.indexOfUid(local.attachIter())).isEqualTo(11);
            assertThat(copy.iters()).hasSize(16);
        }
        for (Sketch k : fused) {
            LoopState s = k.state();
            Stage out = s.stage(s.stageIndex("softmax"));
            // b.0 h.0 i.0 | b.1 h.1 i.1 | j: the row block is the scores' tile below its outer level, j stays whole
            assertThat(out.iters()).hasSize(7);
            assertThat(out.iter(6).name()).isEqualTo("l");
            for (Stage st : s.stages()) {
                // the chain's stages (the reductions, their rf stages, exp) and the scores; not the operands' copies
                if (!st.name().startsWith("softmax_") && !st.name().equals("scores")) continue;
                assertThat(st.computeAt()).as(st.name()).isEqualTo(ComputeAtKind.ITER);
                assertThat(s.stage(st.attachStage()).name()).as(st.name()).isEqualTo("softmax");
                assertThat(out.indexOfUid(st.attachIter())).as(st.name()).isEqualTo(2);
                assertThat(RowChains.isRowFused(AccessAnalyzer.of(s), s, s.stageIndex(st.name())))
                        .as(st.name())
                        .isTrue();
            }
        }
        // the unfused sketches are all still there
        assertThat(all.size() - fused.size())
                .isEqualTo(TargetRules.ansorCpu().sketches(task).size() * 2);
    }

    @Test
    void appliesOnlyWhereRowsAreReduced() {
        // a matmul alone, a matmul with an element-wise consumer, a softmax alone: no row chain
        for (ComputeDAG dag : List.of(
                Workloads.matmul(64, 64, 64),
                Workloads.conv2dBnRelu(1, 14, 14, 16, 32, 3, 1, 1),
                Workloads.softmaxNm(4, 64))) {
            SearchTask task = Workloads.task(dag);
            LoopState init = LoopState.initial(task.dag());
            AccessAnalyzer access = AccessAnalyzer.of(init);
            for (int id = 0; id < init.stages().size(); id++) {
                if (!access.needsMultiLevelTiling(init.stage(id).op())) continue;
                assertThat(RowChains.of(access, init, id)).isNull();
            }
            assertThat(rowFused(TargetRules.cpu().sketches(task))).isEmpty();
        }
        // a reduction that drops a leading axis (a column sum of a matmul) cannot be computed per row block
        Tensor a = Te.placeholder("A", FLOAT32, 32, 16);
        Tensor b = Te.placeholder("B", FLOAT32, 16, 32);
        Tensor c = Te.compute(
                "C", Te.shape(32, 32), (i, j) -> Te.sum(16, k -> a.at(i, k).mul(b.at(k, j))));
        Tensor colSum = Te.compute("colsum", Te.shape(32), j -> Te.sum(32, i -> c.at(i, j)));
        Tensor scaled =
                Te.compute("scaled", Te.shape(32, 32), (i, j) -> c.at(i, j).div(colSum.at(j)));
        SearchTask task = Workloads.task(ComputeDAG.of(scaled));
        LoopState init = LoopState.initial(task.dag());
        AccessAnalyzer access = AccessAnalyzer.of(init);
        assertThat(RowChains.of(access, init, init.stageIndex("C"))).isNull();
    }

    @Test
    void denseUnderALayerNormIsFusedToo() {
        Tensor x = Te.placeholder("X", FLOAT32, 16, 32);
        Tensor w = Te.placeholder("W", FLOAT32, 32, 48);
        Tensor y = Te.compute(
                "Y", Te.shape(16, 48), (i, j) -> Te.sum(32, k -> x.at(i, k).mul(w.at(k, j))));
        ComputeDAG dag = ComputeDAG.of(
                Norm.layerNorm(y, Te.placeholder("gamma", FLOAT32, 48), Te.placeholder("beta", FLOAT32, 48), 1, 1e-5));
        LoopState init = LoopState.initial(dag);
        RowChains.RowChain chain = RowChains.of(AccessAnalyzer.of(init), init, init.stageIndex("Y"));
        assertThat(chain).isNotNull();
        assertThat(chain.output()).isEqualTo(init.stages().size() - 1);
        assertThat(chain.between()).isNotEmpty();
    }

    @Test
    void sampledRowFusedProgramsComputeTheReference() {
        ComputeDAG dag = Workloads.attention(1, 32, 2, 16);
        SearchTask task = Workloads.task(dag);
        TargetRules rules = TargetRules.cpu();
        List<Sketch> fused = rowFused(rules.sketches(task));
        InitPopulation.Result res = rules.population(task, fused).sample(24, new SplittableRandom(5));
        assertThat(res.candidates()).hasSize(24);
        List<NDArray> in = List.of(NDArray.random(FLOAT32, 1, 1, 32, 2, 16), NDArray.random(FLOAT32, 2, 1, 32, 2, 16));
        NDArray expected = run(LowerDefault.lower("ref", dag), in);
        for (Candidate c : res.candidates()) {
            LoopState s = c.state();
            // the annotation kept the block: the scores are still computed per row block of the output
            Stage scores = s.stage(s.stageIndex("scores"));
            assertThat(scores.computeAt()).as(c.key()).isEqualTo(ComputeAtKind.ITER);
            assertThat(run(Lowering.lower("fused", c.schedule()), in)
                            .compareTo(expected, 1e-5, 1e-5)
                            .ok())
                    .as(c.key())
                    .isTrue();
        }
    }

    @Test
    void sampledCachedRowFusedProgramsComputeTheReference() {
        ComputeDAG dag = Workloads.attention(1, 32, 2, 16);
        SearchTask task = Workloads.task(dag);
        TargetRules rules = TargetRules.cpu();
        InitPopulation.Result res =
                rules.population(task, cached(rules.sketches(task))).sample(24, new SplittableRandom(7));
        assertThat(res.candidates()).hasSize(24);
        List<NDArray> in = List.of(NDArray.random(FLOAT32, 3, 1, 32, 2, 16), NDArray.random(FLOAT32, 4, 1, 32, 2, 16));
        NDArray expected = run(LowerDefault.lower("ref", dag), in);
        for (Candidate c : res.candidates()) {
            LoopState s = c.state();
            assertThat(s.stage(s.stageIndex("scores.local")).computeAt())
                    .as(c.key())
                    .isEqualTo(ComputeAtKind.ITER);
            assertThat(s.stage(s.stageIndex("scores")).computeAt()).as(c.key()).isEqualTo(ComputeAtKind.ITER);
            assertThat(run(Lowering.lower("cached", c.schedule()), in)
                            .compareTo(expected, 1e-5, 1e-5)
                            .ok())
                    .as(c.key())
                    .isTrue();
        }
    }

    @Test
    void sampledRowFusedSoftmaxAndLayerNormComputeTheReference() {
        Tensor x = Te.placeholder("X", FLOAT32, 6, 40);
        ComputeDAG softmax = ComputeDAG.of(Softmax.softmax(x, 1));
        ComputeDAG norm = ComputeDAG.of(
                Norm.layerNorm(x, Te.placeholder("gamma", FLOAT32, 40), Te.placeholder("beta", FLOAT32, 40), 1, 1e-5));
        for (ComputeDAG dag : List.of(softmax, norm)) {
            SearchTask task = Workloads.task(dag);
            TargetRules rules = TargetRules.cpu();
            // the twins of FuseRowReductions: every compute stage but the output computed at its row loop
            List<Sketch> fused = rules.sketches(task).stream()
                    .filter(k -> {
                        LoopState s = k.state();
                        int out = s.stages().size() - 1;
                        return s.stages().stream()
                                .filter(st -> !st.isPlaceholder()
                                        && st != s.stage(out)
                                        && st.computeAt() != ComputeAtKind.INLINED)
                                .allMatch(st -> st.computeAt() == ComputeAtKind.ITER && st.attachStage() == out);
                    })
                    .toList();
            assertThat(fused).as(dag.toString()).isNotEmpty();
            List<NDArray> in = new ArrayList<>();
            for (Tensor t : dag.arguments().subList(0, dag.arguments().size() - 1))
                in.add(NDArray.random(FLOAT32, in.size() + 1, t.shape().toArray()));
            NDArray expected = runOn(LowerDefault.lower("ref", dag), in, 6, 40);
            InitPopulation.Result res = rules.population(task, fused).sample(12, new SplittableRandom(4));
            assertThat(res.candidates()).hasSize(12);
            for (Candidate c : res.candidates()) {
                LoopState s = c.state();
                int out = s.stages().size() - 1;
                // the annotation kept the block
                for (int id = 0; id < out; id++) {
                    if (s.stage(id).isPlaceholder() || s.stage(id).computeAt() == ComputeAtKind.INLINED) continue;
                    assertThat(s.stage(id).computeAt()).as(c.key()).isEqualTo(ComputeAtKind.ITER);
                }
                assertThat(runOn(Lowering.lower("fused", c.schedule()), in, 6, 40)
                                .compareTo(expected, 1e-5, 1e-5)
                                .ok())
                        .as(c.key())
                        .isTrue();
            }
        }
    }

    private static NDArray runOn(PrimFunc f, List<NDArray> inputs, long... outShape) {
        NDArray out = NDArray.allocate(FLOAT32, outShape);
        List<NDArray> args = new ArrayList<>(inputs);
        args.add(out);
        Interpreter.run(f, args.toArray(NDArray[]::new));
        return out;
    }

    private static NDArray run(PrimFunc f, List<NDArray> inputs) {
        NDArray out = NDArray.allocate(FLOAT32, 1, 2, 32, 32);
        List<NDArray> args = new ArrayList<>(inputs);
        args.add(out);
        Interpreter.run(f, args.toArray(NDArray[]::new));
        return out;
    }
}
