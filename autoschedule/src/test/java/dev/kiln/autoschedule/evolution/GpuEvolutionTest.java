package dev.kiln.autoschedule.evolution;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.annotate.InitUnroll;
import dev.kiln.autoschedule.feature.FeatureExtractor;
import dev.kiln.autoschedule.feature.FeatureLayout;
import dev.kiln.autoschedule.feature.ProgramFeatures;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.ScheduleLowerer;
import dev.kiln.autoschedule.mutation.MutateAutoUnroll;
import dev.kiln.autoschedule.mutation.MutateTileSize;
import dev.kiln.autoschedule.mutation.MutationRule;
import dev.kiln.autoschedule.progress.TuneProgress;
import dev.kiln.autoschedule.search.FakeMeasurer;
import dev.kiln.autoschedule.search.SearchLimits;
import dev.kiln.autoschedule.search.SearchLoop;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.interp.Interpreter;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Evolution on a GPU task without a GPU: mutated children keep their thread bindings within the
 * device's limits, pass the GPU lowering pipeline, compute the reference result in the
 * interpreter (float32, rtol and atol 1e-4), and their features see the thread extents.
 */
class GpuEvolutionTest {
    static final HardwareParams H200 = HardwareParams.cuda(48 * 1024, Integer.MAX_VALUE, 1024, 8, 32);

    static SearchTask task(ComputeDAG dag) {
        return SearchTask.of(
                dag, "cuda -arch=sm_90 -max-threads-per-block=1024 -shared-memory-per-block=49152 -warp-size=32", H200);
    }

    @Test
    void gpuChildrenAreValidAndCorrect() {
        ComputeDAG dag = Workloads.matmul(64, 48, 32);
        SearchTask t = task(dag);
        List<Candidate> parents = TargetRules.cuda()
                .population(t, TargetRules.cuda().sketches(t))
                .sample(12, new SplittableRandom(4))
                .candidates();
        assertThat(parents).hasSizeGreaterThan(5);
        ScheduleLowerer lower = ScheduleLowerer.forTarget((CudaTarget) Target.cuda());
        NDArray a = NDArray.random(dev.kiln.ir.DType.FLOAT32, 1, 64, 32),
                b = NDArray.random(dev.kiln.ir.DType.FLOAT32, 2, 32, 48);
        NDArray want = NDArray.allocate(dev.kiln.ir.DType.FLOAT32, 64, 48);
        Interpreter.run(LowerDefault.lower("ref", dag), a, b, want);
        FeatureExtractor fx = FeatureExtractor.of(t);
        int made = 0;
        for (int i = 0; i < parents.size(); i++) {
            for (MutationRule r : List.of(new MutateTileSize(), new MutateAutoUnroll(InitUnroll.GPU_STEPS))) {
                Candidate c = r.apply(t, parents.get(i), new SplittableRandom(i));
                if (c == null) continue;
                made++;
                NDArray got = NDArray.allocate(dev.kiln.ir.DType.FLOAT32, 64, 48);
                Interpreter.run(lower.lower(t, c.schedule()), a, b, got);
                assertThat(got.compareTo(want, 1e-4, 1e-4).ok())
                        .as(r.name() + "\n" + c.key())
                        .isTrue();
                assertThat(c.state().stages().stream()
                                .flatMap(s -> s.iters().stream())
                                .anyMatch(it -> it.annotation() == IterAnnotation.THREAD_X))
                        .isTrue();
                ProgramFeatures f = fx.extract(c);
                float[] row = f.row("matmul");
                assertThat(row[FeatureLayout.IS_GPU]).isEqualTo(1f);
                assertThat(row[FeatureLayout.THREAD_EXTENTS + 3])
                        .as("threadIdx.x")
                        .isGreaterThan(1f); // more than one thread
            }
        }
        assertThat(made).isGreaterThan(8);
    }

    @Test
    void gpuPolicyRunsInTheLoop() {
        SearchTask t = task(Workloads.matmul(64, 64, 64));
        FakeMeasurer m = new FakeMeasurer(Target.cuda());
        EvolutionOptions o = EvolutionOptions.defaults().withPopulation(48).withGenerations(2);
        try (EvolutionarySearchPolicy p = new EvolutionarySearchPolicy(
                t, TargetRules.cuda().sketches(t), dev.kiln.autoschedule.model.GbdtCostModel.defaults(3), o, 3)) {
            var out = new SearchLoop(
                            t,
                            p,
                            m,
                            TuningLog.inMemory(),
                            new SearchLimits(48, 16, Duration.ZERO, 0),
                            TuneProgress.none())
                    .run();
            assertThat(out.trials()).isEqualTo(48);
            assertThat(p.stats().validByRule.keySet()).doesNotContain("MutateComputeLocation", "MutateParallel");
        }
    }
}
