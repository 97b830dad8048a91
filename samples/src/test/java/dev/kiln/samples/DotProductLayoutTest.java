package dev.kiln.samples;

import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.sum;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.DotProductLayout;
import dev.kiln.autoschedule.tune.LayoutFreeKernel;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.schedule.TensorizeStep;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link DotProductLayout}: a uint8 x int8 or bfloat16 matmul written plainly in the DSL (no {@code LowPrecision}
 * call) reads its right operand packed where the target has the dot-product instructions, with its arguments and other
 * stages as declared (a width that is not a multiple of 16 computed on zero-padded columns and copied out); the
 * rewritten computation equals the plain one (int8 exactly, against plain Java too), each
 * computation it cannot rewrite is said in a note naming the stage and the reason, and {@code AutoSchedule.tune} on
 * this CPU runs the plain matmul on {@code vpdpbusd} / {@code vdpbf16ps} with no hint (skipped without them), rebuilt
 * from its log, with the right operand layout-free too.
 */
class DotProductLayoutTest {
    /** A CPU target with AVX-512 VNNI and BF16, whatever the host: the rewrite reads only the features. */
    private static final CpuTarget DOT = Target.cpu().withCpu("znver4", "+avx512f,+avx512bw,+avx512vnni,+avx512bf16");

    /** {@code C[i, j] = sum_k acc(A[i, k]) * acc(B[k, j])} ({@code B[j, k]} when {@code dense}), then C + bias[j]. */
    private static ComputeDAG plain(DType a, DType b, DType acc, int m, int n, int k, boolean dense) {
        Tensor ta = Te.placeholder("A", a, m, k);
        Tensor tb = dense ? Te.placeholder("B", b, n, k) : Te.placeholder("B", b, k, n);
        Tensor bias = Te.placeholder("bias", acc, n);
        Tensor c = compute("C", Shape.of(m, n), (i, j) -> {
            IterVar r = reduceAxis(k, "k");
            return sum(r, ta.at(i, r).cast(acc).mul((dense ? tb.at(j, r) : tb.at(r, j)).cast(acc)));
        });
        return ComputeDAG.of(compute("out", Shape.of(m, n), (i, j) -> c.at(i, j).add(bias.at(j))));
    }

    private static List<NDArray> inputs(ComputeDAG dag, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        return dag.inputs().stream()
                .map(t -> {
                    NDArray x = NDArray.allocate(t.dtype(), t.shape().toArray());
                    for (long e = 0; e < x.numElements(); e++) {
                        switch (t.dtype()) {
                            case UINT8 -> x.setLongFlat(rnd.nextInt(256), e);
                            case INT8 -> x.setLongFlat(rnd.nextInt(256) - 128, e);
                            case INT32 -> x.setLongFlat(rnd.nextInt(2001) - 1000, e);
                            default -> x.setDoubleFlat(rnd.nextDouble(-1, 1), e);
                        }
                    }
                    return x;
                })
                .toList();
    }

    /** The default program of {@code dag} run by the interpreter on {@code in}: its output. */
    private static NDArray interpret(ComputeDAG dag, List<NDArray> in) {
        Tensor o = dag.outputs().getFirst();
        NDArray out = NDArray.allocate(o.dtype(), o.shape().toArray());
        NDArray[] args = java.util.stream.Stream.concat(in.stream(), java.util.stream.Stream.of(out))
                .toArray(NDArray[]::new);
        Interpreter.run(Lowering.lower("f", Schedule.empty(dag)), args);
        return out;
    }

    /** Plain Java: {@code out[i, j] = sum_k A[i, k] * B[k, j] (B[j, k] when dense) + bias[j]} in long arithmetic. */
    private static long[] reference(List<NDArray> in, int m, int n, int k, boolean dense) {
        long[] out = new long[m * n];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                long s = in.get(2).getLong(j);
                for (int q = 0; q < k; q++)
                    s += in.get(0).getLong(i, q)
                            * (dense ? in.get(1).getLong(j, q) : in.get(1).getLong(q, j));
                out[i * n + j] = (int) s;
            }
        return out;
    }

    @Test
    void plainLowPrecisionMatmulsReadTheirRightOperandPackedAndComputeTheSame() {
        for (boolean dense : new boolean[] {false, true}) {
            ComputeDAG dag = plain(DType.UINT8, DType.INT8, DType.INT32, 24, 32, 64, dense);
            DotProductLayout.Result r = DotProductLayout.rewrite(dag, DOT);
            assertThat(r.rewritten()).containsExactly("C");
            assertThat(r.notes()).isEmpty();
            assertThat(r.dag().arguments()).extracting(Tensor::name).containsExactly("A", "B", "bias", "out");
            assertThat(r.dag().ops())
                    .filteredOn(o -> o instanceof ComputeOp c && c.tag().equals("layout_pack"))
                    .singleElement()
                    .satisfies(o -> assertThat(o.output(0).shape().toArray()).containsExactly(2, 16, 16, 4));
            List<NDArray> in = inputs(dag, dense ? 3 : 4);
            long[] expected = reference(in, 24, 32, 64, dense);
            assertThat(interpret(dag, in).toLongArray()).containsExactly(expected);
            assertThat(interpret(r.dag(), in).toLongArray())
                    .as("dense=" + dense)
                    .containsExactly(expected);
        }
        // 40 columns: B packed as 48 with zero columns, the product on 48, the stage its 40
        for (boolean dense : new boolean[] {false, true}) {
            ComputeDAG dag = plain(DType.UINT8, DType.INT8, DType.INT32, 8, 40, 64, dense);
            DotProductLayout.Result r = DotProductLayout.rewrite(dag, DOT);
            assertThat(r.rewritten()).containsExactly("C");
            assertThat(r.dag().ops()).extracting(o -> o.name()).contains("packed_B", "C_padded", "C");
            assertThat(r.dag().ops())
                    .filteredOn(o -> o.name().equals("C_padded"))
                    .singleElement()
                    .satisfies(o -> assertThat(o.output(0).shape().toArray()).containsExactly(8, 48));
            List<NDArray> in = inputs(dag, 6);
            assertThat(interpret(r.dag(), in).toLongArray()).containsExactly(reference(in, 8, 40, 64, dense));
        }
        ComputeDAG bf = plain(DType.BFLOAT16, DType.BFLOAT16, DType.FLOAT32, 8, 48, 32, true);
        DotProductLayout.Result r = DotProductLayout.rewrite(bf, DOT);
        assertThat(r.rewritten()).containsExactly("C");
        List<NDArray> in = inputs(bf, 5);
        interpret(r.dag(), in).assertClose(interpret(bf, in), 1e-6, 1e-6);
    }

    /**
     * Batched products: {@code C[b, i, j] = sum_k A[b, i, k] * B[b, k, j]} (attention's) packs B per batch as
     * {@code [3, 2, K/4, 16, 4]}, and a weight shared by the batch, {@code W[k, j]}, once; both with 24 columns (padded
     * to 32), exact against plain Java.
     */
    @Test
    void batchedProductsPackBPerBatchOrOnceForASharedWeight() {
        int batch = 3, m = 8, n = 24, k = 32;
        for (boolean shared : new boolean[] {false, true}) {
            Tensor a = Te.placeholder("A", DType.UINT8, batch, m, k);
            Tensor b = shared ? Te.placeholder("B", DType.INT8, k, n) : Te.placeholder("B", DType.INT8, batch, k, n);
            ComputeDAG dag = ComputeDAG.of(compute("C", Shape.of(batch, m, n), (x, i, j) -> {
                IterVar r = reduceAxis(k, "k");
                Expr w = shared ? b.at(r, j) : b.at(x, r, j);
                return sum(r, a.at(x, i, r).cast(DType.INT32).mul(w.cast(DType.INT32)));
            }));
            DotProductLayout.Result res = DotProductLayout.rewrite(dag, DOT);
            assertThat(res.rewritten()).as("shared=" + shared).containsExactly("C");
            assertThat(res.dag().ops())
                    .filteredOn(o -> o.name().equals("packed_B"))
                    .singleElement()
                    .satisfies(o -> assertThat(o.output(0).shape().toArray())
                            .containsExactly(
                                    shared ? new long[] {2, k / 4, 16, 4} : new long[] {batch, 2, k / 4, 16, 4}));
            List<NDArray> in = inputs(dag, shared ? 11 : 12);
            long[] expected = new long[batch * m * n];
            for (int x = 0; x < batch; x++)
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < n; j++) {
                        long sum = 0;
                        for (int q = 0; q < k; q++) {
                            long w =
                                    shared ? in.get(1).getLong(q, j) : in.get(1).getLong(x, q, j);
                            sum += in.get(0).getLong(x, i, q) * w;
                        }
                        expected[(x * m + i) * n + j] = sum;
                    }
            assertThat(interpret(res.dag(), in).toLongArray()).containsExactly(expected);
        }
    }

    @Test
    void whatCannotBeRewrittenIsSaidWithTheStageAndTheReason() {
        assertThat(DotProductLayout.rewrite(plain(DType.BFLOAT16, DType.BFLOAT16, DType.FLOAT32, 8, 32, 33, true), DOT)
                        .notes())
                .singleElement()
                .asString()
                .contains("stage 'C'", "bfloat16 x bfloat16", "reduction of 33 is not a multiple of 2");
        CpuTarget avx2 = Target.cpu().withCpu("x86-64-v3", "+avx2,+fma");
        ComputeDAG fits = plain(DType.UINT8, DType.INT8, DType.INT32, 8, 32, 64, false);
        DotProductLayout.Result none = DotProductLayout.rewrite(fits, avx2);
        assertThat(none.dag()).isSameAs(fits);
        assertThat(none.notes()).singleElement().asString().contains("avx512vnni", "x86-64-v3");
        // B read first: packing it would put B before A among the kernel's arguments
        Tensor a = Te.placeholder("A", DType.UINT8, 8, 64), b = Te.placeholder("B", DType.INT8, 64, 32);
        ComputeDAG swapped = ComputeDAG.of(compute("C", Shape.of(8, 32), (i, j) -> {
            IterVar r = reduceAxis(64, "k");
            return sum(r, b.at(r, j).cast(DType.INT32).mul(a.at(i, r).cast(DType.INT32)));
        }));
        assertThat(DotProductLayout.rewrite(swapped, DOT).notes())
                .singleElement()
                .asString()
                .contains("kernel's arguments", "[B, A, C]");
        // float32 and int8 x int8 products are not the instructions' and are left alone without a note
        for (ComputeDAG other : List.of(
                plain(DType.FLOAT32, DType.FLOAT32, DType.FLOAT32, 8, 32, 64, false),
                plain(DType.INT8, DType.INT8, DType.INT32, 8, 32, 64, false))) {
            DotProductLayout.Result r = DotProductLayout.rewrite(other, DOT);
            assertThat(r.dag()).isSameAs(other);
            assertThat(r.notes()).isEmpty();
        }
    }

    @Test
    void aPlainInt8MatmulTunesOntoVnniWithNoHint(@TempDir Path dir) {
        CpuTarget target = Target.cpu();
        String why = TensorIntrinsics.get(TensorIntrinsics.VNNI_U8S8).unavailableReason(target);
        assumeTrue(why == null, why);
        int m = 16, n = 40, k = 128; // 40 columns: B packed as 48, zeros after its 40
        ComputeDAG dag = plain(DType.UINT8, DType.INT8, DType.INT32, m, n, k, false);
        List<NDArray> in = inputs(dag, 7);
        long[] expected = reference(in, m, n, k, false);
        Path log = dir.resolve("plain.jsonl"), logFree = dir.resolve("free.jsonl");
        try (LocalMeasurer lm = LocalMeasurer.of(target, MeasureOptions.smoke())) {
            TuneOptions.Builder opts =
                    TuneOptions.builder().trials(4).measuresPerRound(2).seed(7).measurer(lm);
            try (TuneResult r = AutoSchedule.tune(dag, target, opts.logFile(log).build());
                    NDArray out = NDArray.allocate(DType.INT32, m, n)) {
                assertThat(r.schedule().steps()).anyMatch(s -> s instanceof TensorizeStep);
                assertThat(r.notes()).anyMatch(x -> x.contains("stage 'C' reads its right operand packed"));
                r.kernel().call(in.get(0), in.get(1), in.get(2), out);
                assertThat(out.toLongArray()).containsExactly(expected);
            }
            try (CompiledKernel built = AutoSchedule.build(dag, target, log);
                    NDArray out = NDArray.allocate(DType.INT32, m, n)) {
                built.call(in.get(0), in.get(1), in.get(2), out);
                assertThat(out.toLongArray()).as("rebuilt from the log").containsExactly(expected);
            }
            // B layout-free (a constant weight): packed once, by the kernel's pack, not in every call
            try (TuneResult r = AutoSchedule.tune(
                            dag, target, opts.logFile(logFree).layoutFree("B").build());
                    LayoutFreeKernel built = AutoSchedule.buildLayoutFree(dag, target, logFree, "B");
                    NDArray packed = built.pack("B", in.get(1));
                    NDArray out = NDArray.allocate(DType.INT32, m, n)) {
                assertThat(r.schedule().steps()).anyMatch(s -> s instanceof TensorizeStep);
                assertThat(packed.shape()).containsExactly(3, k / 4, 16, 4);
                built.call(in.get(0), packed, in.get(2), out);
                assertThat(out.toLongArray()).containsExactly(expected);
            }
        }
    }

    /** Attention's second product in bfloat16, {@code P[h, i, t] x V[h, t, d]}, tuned on this CPU with no hint. */
    @Test
    void aBatchedBfloat16ProductTunesOntoDpbf16ps() {
        Tensor p = Te.placeholder("P", DType.BFLOAT16, 4, 16, 32), v = Te.placeholder("V", DType.BFLOAT16, 4, 32, 32);
        tuneBfloat16AndCheck(ComputeDAG.of(compute("ctx", Shape.of(4, 16, 32), (h, i, d) -> {
            IterVar t = reduceAxis(32, "t");
            return sum(t, p.at(h, i, t).cast(DType.FLOAT32).mul(v.at(h, t, d).cast(DType.FLOAT32)));
        })));
    }

    /**
     * Tunes bfloat16 {@code dag} on this CPU (4 trials, in process; skipped without AVX-512 BF16): the best program is
     * tensorized and its output matches the interpreter's default program within 1e-5.
     */
    private static void tuneBfloat16AndCheck(ComputeDAG dag) {
        CpuTarget target = Target.cpu();
        String why = TensorIntrinsics.get(TensorIntrinsics.BF16_DOT).unavailableReason(target);
        assumeTrue(why == null, why);
        List<NDArray> in = inputs(dag, 13);
        Tensor o = dag.outputs().getFirst();
        try (LocalMeasurer lm = LocalMeasurer.of(target, MeasureOptions.smoke());
                TuneResult r = AutoSchedule.tune(
                        dag,
                        target,
                        TuneOptions.builder()
                                .trials(4)
                                .measuresPerRound(2)
                                .seed(7)
                                .measurer(lm)
                                .build());
                NDArray out = NDArray.allocate(o.dtype(), o.shape().toArray())) {
            assertThat(r.schedule().steps()).anyMatch(s -> s instanceof TensorizeStep);
            NDArray[] args = java.util.stream.Stream.concat(in.stream(), java.util.stream.Stream.of(out))
                    .toArray(NDArray[]::new);
            r.kernel().call(args);
            out.assertClose(interpret(dag, in), 1e-5, 1e-5);
        }
    }

    @Test
    void aPlainBfloat16MatmulTunesOntoDpbf16psWithNoHint() {
        tuneBfloat16AndCheck(plain(DType.BFLOAT16, DType.BFLOAT16, DType.FLOAT32, 8, 40, 64, false)); // 40: padded
    }
}
