package dev.kiln.autoschedule.layout;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.interp.Interpreter;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvParams;
import dev.kiln.nn.Elementwise;
import dev.kiln.nn.Linalg;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.layout.LayoutRewrite;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Layout rewrite on programs the auto-scheduler samples (sketch generation + random annotation):
 * for each sampled program, the original program on the original weights and the rewritten
 * program on the transformed weights give identical outputs in the interpreter (tolerance 0:
 * same arithmetic in the same order). Most samples must be rewritten; the reasons for the others
 * are printed. The search's shortcut, {@link LayoutRewrite#rewriteInferred} on the candidate's
 * bound-inferred state, must derive the same layouts.
 */
class LayoutRewriteSampledTest {

    private static void check(String what, ComputeDAG dag, Set<Tensor> weights, int n, long seed) {
        SearchTask task = Workloads.task(dag);
        InitPopulation.Result res = TargetRules.cpu()
                .population(task, TargetRules.cpu().sketches(task))
                .sample(n, new SplittableRandom(seed));
        assertThat(res.candidates()).isNotEmpty();
        List<NDArray> original = new ArrayList<>();
        int i = 0;
        for (Tensor t : dag.arguments()) {
            long[] shape = t.shape().toArray();
            original.add(
                    t.isPlaceholder()
                            ? NDArray.random(t.dtype(), seed * 31 + i++, shape)
                            : NDArray.allocate(t.dtype(), shape));
        }
        int rewritten = 0, packed = 0;
        Map<String, Integer> reasons = new TreeMap<>();
        List<String> failures = new ArrayList<>();
        for (Candidate c : res.candidates()) {
            Schedule s = c.schedule();
            if (s.steps().stream().anyMatch(x -> x instanceof dev.kiln.schedule.CacheReadStep)) packed++;
            List<NDArray> a = copies(original);
            Interpreter.run(Lowering.lower("f", s), a.toArray(NDArray[]::new));
            LayoutRewrite.Result r = LayoutRewrite.rewrite(s, weights);
            if (r.rewritten()) rewritten++;
            // the search's shortcut (extents read from the candidate's inferred loops) derives the same layouts
            LayoutRewrite.Result fast = LayoutRewrite.rewriteInferred(c.state(), weights);
            if (!fast.transforms().stream()
                            .map(LayoutRewrite.Transform::layout)
                            .toList()
                            .equals(r.transforms().stream()
                                    .map(LayoutRewrite.Transform::layout)
                                    .toList())
                    || fast.skipped().size() != r.skipped().size()) {
                failures.add("rewriteInferred: " + fast.transforms() + " " + fast.skipped() + " against "
                        + r.transforms() + " " + r.skipped() + "\n" + s.toJavaSource());
            }
            for (LayoutRewrite.Skipped k : r.skipped())
                reasons.merge(k.reason().replaceAll("'[^']*'", "'.'"), 1, Integer::sum);
            List<NDArray> b = r.transformArguments(copies(original));
            Interpreter.run(Lowering.lower("f", r.schedule()), b.toArray(NDArray[]::new));
            for (int o = dag.inputs().size(); o < a.size(); o++) {
                Comparison cmp = b.get(o).compareTo(a.get(o), 0, 0);
                if (!cmp.ok()) failures.add(r.transforms() + "\n" + s.toJavaSource() + cmp.report());
            }
        }
        System.out.printf(
                "%s: %d samples, %d rewritten; left alone: %s%n",
                what, res.candidates().size(), rewritten, reasons);
        assertThat(failures).as(what).isEmpty();
        // Samples of Kiln's packing sketches (AddCacheReadPack) read the weight through a cache_read,
        // which the rewrite leaves alone by design; most of the others must be rewritten.
        assertThat(rewritten)
                .as(what + ": rewritten samples")
                .isGreaterThan((res.candidates().size() - packed) / 2);
    }

    private static List<NDArray> copies(List<NDArray> in) {
        return in.stream().map(NDArray::copy).toList();
    }

    @Test
    void conv2dNhwcBiasRelu() {
        for (long stride : new long[] {1, 2}) {
            Tensor data = Te.placeholder("data", FLOAT32, 1, 7, 7, 4);
            Tensor w = Te.placeholder("W", FLOAT32, 3, 3, 4, 8);
            Tensor b = Te.placeholder("b", FLOAT32, 8);
            Tensor out =
                    Activation.relu(Elementwise.biasAdd(Conv.conv2dNhwc(data, w, ConvParams.of(2, stride, 1)), b, 3));
            check("conv2d 3x3 stride " + stride, ComputeDAG.of(out), Set.of(w, b), 40, 20 + stride);
        }
    }

    @Test
    void groupedConv1x1AndDense() {
        Tensor data = Te.placeholder("data", FLOAT32, 1, 6, 6, 8);
        Tensor w = Te.placeholder("W", FLOAT32, 1, 1, 4, 8);
        check(
                "grouped conv2d 1x1",
                ComputeDAG.of(Conv.conv2dNhwc(data, w, ConvParams.of(2, 1, 0).withGroups(2))),
                Set.of(w),
                30,
                31);

        Tensor x = Te.placeholder("x", FLOAT32, 4, 32);
        Tensor dw = Te.placeholder("w", FLOAT32, 16, 32);
        Tensor db = Te.placeholder("b", FLOAT32, 16);
        check("dense+bias", ComputeDAG.of(Linalg.dense(x, dw, db)), Set.of(dw, db), 40, 32);

        Tensor bx = Te.placeholder("X", FLOAT32, 2, 8, 16);
        Tensor by = Te.placeholder("Y", FLOAT32, 1, 16, 8);
        check("batch_matmul", ComputeDAG.of(Linalg.batchMatmul(bx, by)), Set.of(by), 40, 33);
    }
}
