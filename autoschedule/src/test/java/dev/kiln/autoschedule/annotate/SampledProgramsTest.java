package dev.kiln.autoschedule.annotate;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.interp.Interpreter;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvTranspose;
import dev.kiln.nn.Layout;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Pool;
import dev.kiln.nn.Reduction;
import dev.kiln.nn.Softmax;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.AnnotationStep;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The search space is correct: every program the random annotation produces lowers and, in the
 * reference interpreter, computes what the default lowering computes, on seeded random inputs.
 * Tolerance: float32 with rtol 1e-4 and atol 1e-4, because rfactor and tiling reorder the
 * float32 sums (values of magnitude about 1, sums of at most a few hundred terms).
 */
class SampledProgramsTest {

    private static void check(String what, ComputeDAG dag, int n, long seed) {
        check(what, dag, n, seed, false);
    }

    /** {@code movesStages}: some samples must compute a stage somewhere new (InitChangeComputeLocation). */
    private static void check(String what, ComputeDAG dag, int n, long seed, boolean movesStages) {
        SearchTask task = Workloads.task(dag);
        List<Sketch> sketches = TargetRules.cpu().sketches(task);
        InitPopulation.Result res = TargetRules.cpu().population(task, sketches).sample(n, new SplittableRandom(seed));
        assertThat(res.candidates()).as(what + ": distinct samples").hasSize(n);

        List<NDArray> inputs = randomInputs(dag, seed);
        NDArray expected = run(LowerDefault.lower("reference", dag), dag, inputs);
        Set<String> keys = new HashSet<>();
        Set<Integer> sketchesSeen = new HashSet<>();
        List<String> failures = new ArrayList<>();
        int parallel = 0, vectorized = 0, unrolled = 0, moved = 0;
        for (Candidate c : res.candidates()) {
            List<Step> steps = c.schedule().steps();
            if (steps.stream()
                    .anyMatch(x -> x instanceof AnnotationStep a && a.annotation() == IterAnnotation.PARALLEL))
                parallel++;
            if (steps.stream()
                    .anyMatch(x -> x instanceof AnnotationStep a && a.annotation() == IterAnnotation.VECTORIZE))
                vectorized++;
            if (c.state().stages().stream().anyMatch(st -> st.autoUnrollMaxStep() > 0)) unrolled++;
            if (c.state().stages().stream()
                    .anyMatch(st -> st.computeAt() == ComputeAtKind.ITER && !StagePredicates.isTiled(st))) moved++;
            assertThat(keys.add(c.key())).as("keys are distinct").isTrue();
            Schedule s = c.schedule();
            assertThat(s.replay().isConcrete()).isTrue();
            assertThat(NestedParallel.has(c.state())).isFalse();
            // the key is a function of the steps: replaying them and inferring bounds gives it again
            assertThat(Candidate.of(Schedule.fromJson(s.toJson(), dag)).key()).isEqualTo(c.key());
            for (int k = 0; k < sketches.size(); k++) if (sameShape(sketches.get(k), s)) sketchesSeen.add(k);
            try {
                Comparison cmp = run(Lowering.lower("sampled", s), dag, inputs).compareTo(expected, 1e-4, 1e-4);
                if (!cmp.ok()) failures.add(c.key() + s.toJavaSource() + cmp.report());
            } catch (RuntimeException e) {
                failures.add(c.key() + s.toJavaSource() + e);
            }
        }
        System.out.printf(
                "%s: %d sketches, %d candidates from %d draws (%d duplicates, invalid %s)%n",
                what,
                sketches.size(),
                res.candidates().size(),
                res.stats().draws(),
                res.stats().duplicates(),
                res.stats().invalid());
        assertThat(failures)
                .as(what + ": samples that do not compute the reference")
                .isEmpty();
        assertThat(parallel).as(what + ": samples with a parallel loop").isPositive();
        assertThat(vectorized).as(what + ": samples with a vectorised loop").isPositive();
        assertThat(unrolled).as(what + ": samples with auto-unroll").isPositive();
        if (movesStages)
            assertThat(moved)
                    .as(what + ": samples with a stage computed inside another")
                    .isPositive();
        assertThat(sketchesSeen).as(what + ": every sketch is sampled").hasSize(sketches.size());
    }

    /** Whether the schedule was annotated from this sketch: it starts with the sketch's steps, sizes aside. */
    private static boolean sameShape(Sketch sketch, Schedule s) {
        if (s.steps().size() < sketch.steps().size()) return false;
        for (int i = 0; i < sketch.steps().size(); i++) {
            var a = sketch.steps().get(i);
            var b = s.steps().get(i);
            if (a instanceof dev.kiln.schedule.SplitStep sa && b instanceof dev.kiln.schedule.SplitStep sb) {
                if (sa.stageId() != sb.stageId()
                        || sa.iterId() != sb.iterId()
                        || sa.lengths().size() != sb.lengths().size()) return false;
            } else if (!a.equals(b)) {
                return false;
            }
        }
        return true;
    }

    private static NDArray run(PrimFunc f, ComputeDAG dag, List<NDArray> inputs) {
        Tensor out = dag.outputs().get(0);
        NDArray o = NDArray.allocate(out.dtype(), out.shape().toArray());
        List<NDArray> args = new ArrayList<>(inputs);
        args.add(o);
        Interpreter.run(f, args.toArray(NDArray[]::new));
        return o;
    }

    @Test
    void matmul() {
        check("matmul 12x16x20", Workloads.matmul(12, 16, 20), 150, 1);
        // S = 48 <= R = 48 and S <= 16 x 4 cores: the rfactor sketches join in
        check("matmul 6x8x48", Workloads.matmul(6, 8, 48), 150, 2);
        check("matmul 7x5x9 (odd)", Workloads.matmul(7, 5, 9), 100, 3);
    }

    @Test
    void conv2d() {
        check("conv2d nhwc+relu", Workloads.conv2dNhwcRelu(1, 5, 5, 4, 4, 3), 120, 4, true);
        check("conv2d nchw+bn+relu", Workloads.conv2dBnRelu(1, 5, 5, 3, 4, 3, 1, 1), 100, 5, true);
    }

    @Test
    void softmax() {
        check("softmax 3x20", Workloads.softmaxNm(3, 20), 150, 6, true);
    }

    @Test
    void norm() {
        check("layer norm 4x10", Workloads.layerNorm(4, 10), 150, 7, true);
    }

    @Test
    void reductionsAndPooling() {
        check("min 5x24", Workloads.minNm(5, 24), 60, 8);
        check("double matmul 8", Workloads.doubleMatmul(8), 100, 9);
    }

    /**
     * Pooling in NHWC and a sum over the outer axes, whose innermost axis is contiguous in every read: Kiln's
     * {@code VectorLanesOutsideReduction} sketches (the reduction loops between whole vectors of that axis and
     * the rest) join the default and rfactor ones, and every sample of every sketch computes the reference.
     */
    @Test
    void poolingOverContiguousChannels() {
        check(
                "max pool nhwc 3x3 s2 p1, 32 channels",
                ComputeDAG.of(Pool.maxPool2dNhwc(Te.placeholder("x", FLOAT32, 1, 9, 9, 32), 3, 2, 1)),
                80,
                12,
                true);
        check(
                "avg pool nhwc 3x3 s1 p1, 64 channels",
                ComputeDAG.of(Pool.avgPool2dNhwc(Te.placeholder("x", FLOAT32, 1, 5, 5, 64), 3, 1, 1, false)),
                80,
                13);
        check(
                "sum over h and w, 48 channels",
                ComputeDAG.of(Reduction.sum(Te.placeholder("x", FLOAT32, 1, 7, 7, 48), 1, 2)),
                40,
                14);
    }

    /**
     * Transposed convs in the phase form (stride 2, dilation 1): the T2D shape (K 4, pad 1, no condition on the
     * reduction) and K 3 (the reduction's condition leaves out the taps past the kernel, so a schedule must keep
     * its reads of the weight under that guard).
     */
    @Test
    void transposedConv() {
        check(
                "conv2d transpose K4 s2 p1",
                ComputeDAG.of(ConvTranspose.conv2dTransposeNhwc(
                        Te.placeholder("data", FLOAT32, 1, 4, 4, 8),
                        Te.placeholder("weight", FLOAT32, 4, 4, 8, 6),
                        2,
                        1)),
                100,
                10);
        check(
                "conv2d transpose K3 s2 p1",
                ComputeDAG.of(ConvTranspose.conv2dTransposeNhwc(
                        Te.placeholder("data", FLOAT32, 1, 4, 5, 4),
                        Te.placeholder("weight", FLOAT32, 3, 3, 4, 6),
                        2,
                        1)),
                80,
                11);
    }

    /**
     * The rest of the operator library, a few samples each (small search spaces run out early:
     * sampling gives up after 100 draws without a new program).
     */
    @Test
    void operatorLibrary() {
        List<ComputeDAG> dags = new ArrayList<>();
        Tensor x = Te.placeholder("x", FLOAT32, 5, 24);
        dags.add(ComputeDAG.of(Reduction.argmax(x, 1)));
        dags.add(ComputeDAG.of(Reduction.mean(x, 0)));
        dags.add(ComputeDAG.of(Reduction.sum(Te.placeholder("x", FLOAT32, 3, 4, 10), 1, 2)));
        dags.add(ComputeDAG.of(Reduction.sum(Te.placeholder("x", FLOAT32, 40))));
        dags.add(ComputeDAG.of(
                Linalg.batchMatmul(Te.placeholder("X", FLOAT32, 2, 5, 6), Te.placeholder("Y", FLOAT32, 2, 6, 4))));
        dags.add(ComputeDAG.of(Linalg.dense(
                Te.placeholder("x", FLOAT32, 3, 8),
                Te.placeholder("w", FLOAT32, 5, 8),
                Te.placeholder("b", FLOAT32, 5))));
        dags.add(Workloads.maxPool2d(1, 6, 6, 3, 1));
        dags.add(ComputeDAG.of(Pool.avgPool2dNhwc(Te.placeholder("x", FLOAT32, 1, 6, 6, 3), 3, 2, 1, false)));
        dags.add(ComputeDAG.of(Conv.depthwiseConv2dNchw(
                Te.placeholder("d", FLOAT32, 1, 3, 6, 6), Te.placeholder("w", FLOAT32, 3, 1, 3, 3), 1, 1)));
        dags.add(ComputeDAG.of(ConvTranspose.conv2dTransposeNhwc(
                Te.placeholder("d", FLOAT32, 1, 3, 3, 2), Te.placeholder("w", FLOAT32, 3, 3, 2, 3), 2, 1)));
        dags.add(ComputeDAG.of(Softmax.logSoftmax(Te.placeholder("x", FLOAT32, 4, 12))));
        dags.add(ComputeDAG.of(Activation.gelu(
                Linalg.matmul(Te.placeholder("A", FLOAT32, 6, 10), Te.placeholder("B", FLOAT32, 10, 6)))));
        dags.add(ComputeDAG.of(Layout.transpose(Activation.relu(Te.placeholder("x", FLOAT32, 6, 10)))));
        for (int d = 0; d < dags.size(); d++) {
            ComputeDAG dag = dags.get(d);
            SearchTask task = Workloads.task(dag);
            InitPopulation pop = new InitPopulation(
                    task,
                    TargetRules.cpu().sketches(task),
                    TargetRules.cpu().initRules(),
                    new FactorizationMemo(),
                    100);
            InitPopulation.Result res = pop.sample(25, new SplittableRandom(100 + d));
            assertThat(res.candidates()).isNotEmpty();
            List<NDArray> inputs = randomInputs(dag, 100 + d);
            NDArray expected = run(LowerDefault.lower("reference", dag), dag, inputs);
            for (Candidate c : res.candidates()) {
                Comparison cmp = run(Lowering.lower("sampled", c.schedule()), dag, inputs)
                        .compareTo(expected, 1e-4, 1e-4);
                assertThat(cmp.ok())
                        .as("%s\n%s%s", cmp.report(), c.key(), c.schedule().toJavaSource())
                        .isTrue();
            }
        }
    }

    private static List<NDArray> randomInputs(ComputeDAG dag, long seed) {
        List<NDArray> inputs = new ArrayList<>();
        for (int i = 0; i < dag.inputs().size(); i++) {
            Tensor t = dag.inputs().get(i);
            inputs.add(NDArray.random(t.dtype(), seed * 31 + i, t.shape().toArray()));
        }
        return inputs;
    }
}
