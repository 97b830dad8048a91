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
import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvParams;
import dev.kiln.nn.Winograd;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.StmtPrinter;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Winograd transforms' sketch rule: their constant-matrix loops unrolled below the tiles with a vector of
 * channels innermost, no other stage touched, and sampled programs that compute the direct convolution (interpreter,
 * seeded inputs in [-1, 1), 1e-4 relative to the output's largest value) with every constant loop gone from the
 * lowered code.
 */
class SimplifyComputeWithConstTensorTest {

    private static ComputeDAG winograd(int m, long channels) {
        Tensor data = Te.placeholder("data", FLOAT32, 1, 8, 8, channels);
        Tensor u = Te.placeholder("u", FLOAT32, m + 2, m + 2, channels, channels);
        return ComputeDAG.of(Winograd.conv2dNhwcTransformed(data, u, m, ConvParams.of(2, 1, 1)));
    }

    @ParameterizedTest(name = "m={0}")
    @ValueSource(ints = {2, 4})
    void theTransformsGetTheirConstantLoopsUnrolledAboveAVectorOfChannels(int m) {
        SearchTask task = Workloads.task(winograd(m, 32));
        int lanes = task.hardware().lanes(4);
        List<Sketch> sketches = TargetRules.cpu().sketches(task);
        assertThat(sketches).isNotEmpty();
        for (Sketch k : sketches) {
            LoopState s = k.state();
            int transforms = 0;
            for (Stage st : s.stages()) {
                if (st.isPlaceholder()) continue;
                List<String> unrolled = Winograd.unrolledAxes(st.computeOp());
                if (unrolled.isEmpty()) continue;
                transforms++;
                for (String name : unrolled) {
                    assertThat(st.iter(st.indexOf(name)).annotation())
                            .as("%s loop %s", st.name(), name)
                            .isEqualTo(IterAnnotation.UNROLL);
                }
                var last = st.iters().getLast();
                assertThat(last.name()).as(st.name()).endsWith(".1");
                assertThat(last.extent()).as(st.name()).isEqualTo((long) lanes);
                // the outer parts of the other spatial loops lead, the unrolled loops sit right above the vector
                assertThat(st.iters().getFirst().name()).isEqualTo("p.0");
                assertThat(st.iters().get(st.iters().size() - 2).name()).isEqualTo("r_b");
            }
            assertThat(transforms).isEqualTo(2);
            Stage pad = s.stages().stream()
                    .filter(x -> x.name().equals("pad"))
                    .findFirst()
                    .orElseThrow();
            assertThat(pad.computeAt()).isEqualTo(dev.kiln.schedule.ComputeAtKind.INLINED);
        }
    }

    @ParameterizedTest(name = "channels={0}")
    @ValueSource(ints = {12, 32})
    void onlyTheTransformsMatch(int channels) {
        SearchTask task = Workloads.task(winograd(2, channels));
        AccessAnalyzer access = AccessAnalyzer.of(task.dag());
        LoopState s = LoopState.initial(task.dag());
        SimplifyComputeWithConstTensor rule = new SimplifyComputeWithConstTensor();
        List<String> applies = new ArrayList<>();
        for (int id = 0; id < s.stages().size(); id++) {
            if (rule.condition(task, access, s, id) != SketchRule.Condition.SKIP)
                applies.add(s.stage(id).name());
        }
        assertThat(applies).containsExactlyInAnyOrder("data_pack", "inverse");
        // channels that are not a whole number of vectors: both parts of the channel split are left to the search
        Stage dataPack = s.stage(s.stages().stream().map(Stage::name).toList().indexOf("data_pack"));
        LoopState after = rule.apply(task, access, s, s.stages().indexOf(dataPack))
                .getFirst()
                .state();
        Stage t = after.stage(s.stages().indexOf(dataPack));
        assertThat(t.iters().getLast().name())
                .isEqualTo(channels % task.hardware().lanes(4) == 0 ? "c.1" : "r_b");
        // a direct convolution's stages are not touched
        SearchTask direct = Workloads.task(ComputeDAG.of(Conv.conv2dNhwc(
                Te.placeholder("data", FLOAT32, 1, 8, 8, 16), Te.placeholder("w", FLOAT32, 3, 3, 16, 16), 1, 1)));
        LoopState d = LoopState.initial(direct.dag());
        for (int id = 0; id < d.stages().size(); id++) {
            assertThat(rule.condition(direct, AccessAnalyzer.of(direct.dag()), d, id))
                    .isEqualTo(SketchRule.Condition.SKIP);
        }
    }

    @ParameterizedTest(name = "m={0}")
    @ValueSource(ints = {2, 4})
    void sampledProgramsComputeTheConvolutionWithTheConstantLoopsGone(int m) {
        ComputeDAG dag = winograd(m, 16);
        SearchTask task = Workloads.task(dag);
        TargetRules rules = TargetRules.cpu();
        InitPopulation.Result res = rules.population(task, rules.sketches(task)).sample(8, new SplittableRandom(5));
        assertThat(res.candidates()).isNotEmpty();
        List<NDArray> in =
                List.of(NDArray.random(FLOAT32, 1, 1, 8, 8, 16), NDArray.random(FLOAT32, 2, m + 2, m + 2, 16, 16));
        NDArray expected = run(LowerDefault.lower("ref", dag), in);
        double scale = 0;
        for (float v : expected.toFloatArray()) scale = Math.max(scale, Math.abs(v));
        for (Candidate c : res.candidates()) {
            PrimFunc f = Lowering.lower("wino", c.schedule());
            assertThat(run(f, in).compareTo(expected, 1e-4 * scale, 1e-5).ok())
                    .as(c.key())
                    .isTrue();
            String text = StmtPrinter.print(f);
            for (String loop : List.of("eps", "nu", "r_a", "r_b", "vh", "vw")) {
                assertThat(text).as("loop %s in %s", loop, c.key()).doesNotContain("for " + loop + " in ");
            }
        }
    }

    private static NDArray run(PrimFunc f, List<NDArray> in) {
        List<NDArray> args = new ArrayList<>(in);
        NDArray out = NDArray.allocate(FLOAT32, 1, 8, 8, 16);
        args.add(out);
        Interpreter.run(f, args.toArray(NDArray[]::new));
        return out;
    }
}
