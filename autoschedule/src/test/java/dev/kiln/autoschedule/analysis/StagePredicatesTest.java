package dev.kiln.autoschedule.analysis;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.analysis.StagePredicates.Location;
import dev.kiln.interp.Interpreter;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import org.junit.jupiter.api.Test;

/** The state predicates of notes §3.3 on small computations and hand-made schedules. */
class StagePredicatesTest {

    /** A0 = A + 1, B = A0 * 2, C = B × W (8 × 8 × 8). */
    private static ComputeDAG chain() {
        Tensor a = Te.placeholder("A", FLOAT32, 8, 8);
        Tensor w = Te.placeholder("W", FLOAT32, 8, 8);
        Tensor a0 = Te.compute("A0", a.shape(), (i, j) -> a.at(i, j).add(1.0));
        Tensor b = Te.compute("B", a.shape(), (i, j) -> a0.at(i, j).mul(2.0));
        dev.kiln.ir.IterVar k = Te.reduceAxis(8, "k");
        Tensor c =
                Te.compute("C", Te.shape(8, 8), (i, j) -> Te.sum(k, b.at(i, k).mul(w.at(k, j))));
        return ComputeDAG.of(c);
    }

    private static ScheduleBuilder tiledChain() {
        ScheduleBuilder s = ScheduleBuilder.on(chain());
        var c = s.stage("C");
        c.split("i", 4);
        c.split("j", 2);
        c.split("k", 4);
        c.reorder("i.0", "j.0", "k.0", "i.1", "k.1", "j.1");
        return s;
    }

    @Test
    void tiledReduceAndConsumersThroughInlinedStages() {
        ScheduleBuilder s = tiledChain();
        s.stage("A0").computeInline();
        LoopState st = s.state();
        int a0 = st.stageIndex("A0"), b = st.stageIndex("B"), c = st.stageIndex("C"), a = st.stageIndex("A");
        assertThat(StagePredicates.isTiled(st.stage(c))).isTrue();
        assertThat(StagePredicates.isTiled(st.stage(b))).isFalse();
        assertThat(StagePredicates.hasReduceIter(st.stage(c))).isTrue();
        assertThat(StagePredicates.hasReduceIter(st.stage(b))).isFalse();
        assertThat(StagePredicates.consumers(st, a)).containsExactly(b);
        assertThat(StagePredicates.producers(st, b)).containsExactly(a);
        assertThat(StagePredicates.producers(st, c)).containsExactly(b, st.stageIndex("W"));
        assertThat(StagePredicates.singleConsumerId(st, a0)).isEqualTo(b);
        long[] sr = StagePredicates.cumulativeSpaceAndReduceLength(st.stage(c));
        assertThat(sr).containsExactly(64, 8);
    }

    @Test
    void computeLocationCandidatesStopAtTheInnerTilesAndAtAttachPoints() {
        ScheduleBuilder s = tiledChain();
        LoopState st = s.state();
        int b = st.stageIndex("B"), c = st.stageIndex("C"), a0 = st.stageIndex("A0");
        // C is tiled: i.0 (2), j.0 (4), k.0 (2, a reduction loop of a tiled stage), then i.1 is inside the tile
        assertThat(StagePredicates.computeLocationCandidates(st, b))
                .containsExactly(new Location(c, 0), new Location(c, 1), new Location(c, 2));
        // B computed at C's j.0: A0's consumer B is attached, so also C's loops before the attach point
        s.stage("B").computeAt("C", "j.0");
        st = s.state();
        assertThat(StagePredicates.computeLocationCandidates(st, a0))
                .containsExactly(new Location(b, 0), new Location(b, 1), new Location(c, 0));
        // a stage whose consumers hang off different roots has no single consumer
        assertThat(StagePredicates.singleConsumerId(st, st.stageIndex("W"))).isEqualTo(c);
    }

    @Test
    void singleConsumerIsTheCommonRootOfSeveralConsumers() {
        ComputeDAG dag = Workloads.softmaxNm(3, 20);
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        s.stage("softmax_sum").computeAt("softmax", "i");
        LoopState st = s.state();
        int exp = st.stageIndex("softmax_exp"), norm = st.stageIndex("softmax");
        assertThat(StagePredicates.consumers(st, exp)).containsExactly(st.stageIndex("softmax_sum"), norm);
        assertThat(StagePredicates.singleConsumerId(st, exp)).isEqualTo(norm);
        assertThat(StagePredicates.singleConsumerId(LoopState.initial(dag), exp))
                .isEqualTo(-1);
        // norm's i has softmax_sum attached: the walk stops right after it
        assertThat(StagePredicates.computeLocationCandidates(st, exp)).containsExactly(new Location(norm, 0));
    }

    @Test
    void theCommonConsumerIsFoundThroughAChainOfAttachments() {
        // softmax with its sum rfactored (the rf stage computed at the sum) and the sum computed at the
        // normalisation's row loop: exp is read by softmax_sum.rf and softmax, whose chains meet at softmax only
        // two levels up, where Ansor's one-level rule finds no common consumer and leaves exp at root
        ComputeDAG dag = Workloads.softmaxNm(3, 32);
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        s.stage("softmax_sum").split("k", 8);
        s.stage("softmax_sum").rfactor("k.1", 1);
        s.stage("softmax_sum.rf").computeAt("softmax_sum", "i");
        s.stage("softmax_sum").computeAt("softmax", "i");
        LoopState st = s.state();
        int exp = st.stageIndex("softmax_exp"), norm = st.stageIndex("softmax");
        assertThat(StagePredicates.consumers(st, exp)).containsExactly(st.stageIndex("softmax_sum.rf"), norm);
        assertThat(StagePredicates.singleConsumerId(st, exp)).isEqualTo(norm);
        assertThat(StagePredicates.computeLocationCandidates(st, exp)).containsExactly(new Location(norm, 0));
        // and the program with exp (and the max) per row computes softmax
        s.stage("softmax_exp").computeAt("softmax", "i");
        s.stage("softmax_max").computeAt("softmax", "i");
        NDArray a = NDArray.random(FLOAT32, 7, 3, 32);
        NDArray fused = NDArray.allocate(FLOAT32, 3, 32), ref = NDArray.allocate(FLOAT32, 3, 32);
        Interpreter.run(Lowering.lower("fused", s.build()), a, fused);
        Interpreter.run(Lowering.lower("ref", Schedule.empty(dag)), a, ref);
        Comparison c = fused.compareTo(ref, 1e-5, 1e-7);
        assertThat(c.ok()).as(c.report()).isTrue();
        // with the sum at root the chains never meet
        ScheduleBuilder root = ScheduleBuilder.on(dag);
        root.stage("softmax_sum").split("k", 8);
        root.stage("softmax_sum").rfactor("k.1", 1);
        root.stage("softmax_sum.rf").computeAt("softmax_sum", "i");
        assertThat(StagePredicates.singleConsumerId(root.state(), exp)).isEqualTo(-1);
    }

    @Test
    void rfactorDecisionFollowsSpatialAndReductionSizesAndCores() {
        LoopState mm = LoopState.initial(Workloads.matmul(8, 8, 512));
        LoopState big = LoopState.initial(Workloads.matmul(512, 512, 512));
        LoopState min = LoopState.initial(Workloads.minNm(10, 1024));
        LoopState pool = LoopState.initial(Workloads.maxPool2d(1, 8, 8, 4, 1));
        HardwareParams four = Workloads.FOUR_CORES, many = four.withNumCores(64);
        assertThat(StagePredicates.needsRfactor(AccessAnalyzer.of(mm), four, mm, 2))
                .isTrue();
        assertThat(StagePredicates.needsRfactor(AccessAnalyzer.of(mm), many.withNumCores(2), mm, 2))
                .isFalse(); // S=64 > 16*2
        assertThat(StagePredicates.needsRfactor(AccessAnalyzer.of(big), four, big, 2))
                .isFalse();
        assertThat(StagePredicates.needsRfactor(AccessAnalyzer.of(min), four, min, 1))
                .isTrue();
        assertThat(StagePredicates.needsRfactor(AccessAnalyzer.of(min), many.withNumCores(2048), min, 1))
                .isFalse();
        int p = pool.stages().size() - 1;
        assertThat(StagePredicates.needsRfactor(AccessAnalyzer.of(pool), four, pool, p))
                .isFalse(); // R = 4, not > 4
        assertThat(StagePredicates.needsRfactor(AccessAnalyzer.of(pool), four.withNumCores(3), pool, p))
                .isTrue();
    }

    @Test
    void stagesAddedByCacheWriteAndRfactorAreFoundThroughLaterInsertions() {
        ScheduleBuilder s = ScheduleBuilder.on(Workloads.doubleMatmul(16));
        // stages: A B D C E; cache_write E (E.local at 4), then rfactor D (D.rf at 2)
        s.stage("E").cacheWrite("local");
        s.stage("D").split("r", 4);
        s.stage("D").rfactor("r.1", 2);
        LoopState st = s.state();
        assertThat(st.stages().stream().map(x -> x.name()).toList())
                .containsExactly("A", "B", "D.rf", "D", "C", "E.local", "E");
        assertThat(StagePredicates.hasRfactorStage(st, 2)).isTrue();
        assertThat(StagePredicates.hasCacheWriteStage(st, 5)).isTrue();
        assertThat(StagePredicates.hasCacheWriteStage(st, 6)).isFalse();
        assertThat(StagePredicates.hasRfactorStage(st, 3)).isFalse();
        AccessAnalyzer a = AccessAnalyzer.of(st);
        assertThat(StagePredicates.singleElementwiseMatchedConsumer(a, st, 5)).isEqualTo(6);
        assertThat(StagePredicates.singleElementwiseMatchedConsumer(a, st, 3)).isEqualTo(-1);
        assertThat(StagePredicates.isOutput(a, st, 6)).isTrue();
    }

    @Test
    void crossThreadReductionIsAReductionLoopOnThreadX() {
        ScheduleBuilder s = ScheduleBuilder.on(Workloads.softmaxNm(4, 64));
        int sum = s.state().stageIndex("softmax_sum"), norm = s.state().stageIndex("softmax");
        assertThat(StagePredicates.hasCrossThreadReduction(s.state(), sum)).isFalse();
        s.stage("softmax_sum").split("k", 32);
        s.stage("softmax_sum").bind("k.1", "threadIdx.x");
        assertThat(StagePredicates.hasCrossThreadReduction(s.state(), sum)).isTrue();
        s.stage("softmax_sum").computeAt("softmax", "i");
        assertThat(StagePredicates.hasCrossThreadReduction(s.state(), norm)).isTrue();
        // a spatial loop on threadIdx.x is not a cross-thread reduction
        ScheduleBuilder e = ScheduleBuilder.on(Workloads.softmaxNm(4, 64));
        e.stage("softmax").bind("j", "threadIdx.x");
        assertThat(StagePredicates.hasCrossThreadReduction(e.state(), e.state().stageIndex("softmax")))
                .isFalse();
    }
}
