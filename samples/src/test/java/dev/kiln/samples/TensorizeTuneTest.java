package dev.kiln.samples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.FactorizationMemo;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.sketch.MultiLevelTilingTensorize;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.LowPrecision;
import dev.kiln.nn.Quant;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.schedule.TensorizeStep;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * AutoSchedule.tune on low-precision computations with no hint: the search's sketches tensorize
 * them with the CPU's dot-product instructions, and the tuned kernel's numbers match the
 * interpreter (int8 exactly, requantization epilogue included; bf16 within 1e-5 of the
 * interpreter's float32 sums, both summing exact bf16 products). Skips without the instructions.
 */
class TensorizeTuneTest {
    private static final MeasureOptions FAST = MeasureOptions.smoke();

    private static TuneResult tune(ComputeDAG dag, CpuTarget target, LocalMeasurer m) {
        return AutoSchedule.tune(
                dag,
                target,
                TuneOptions.builder()
                        .trials(4)
                        .measuresPerRound(2)
                        .seed(7)
                        .measurer(m)
                        .build());
    }

    @Test
    void int8DenseWithRequantizeTunesOntoVnni() {
        CpuTarget target = Target.cpu();
        String why = TensorIntrinsics.get(TensorIntrinsics.VNNI_U8S8).unavailableReason(target);
        assumeTrue(why == null, why);
        assertThat(MultiLevelTilingTensorize.offered(target)).contains(TensorIntrinsics.VNNI_U8S8);
        Tensor x = Te.placeholder("x", DType.UINT8, 8, 64);
        Tensor w = Te.placeholder("w", DType.INT8, 32, 64);
        Tensor scale = Te.placeholder("scale", DType.FLOAT32, 1);
        Tensor zero = Te.placeholder("zero", DType.UINT8, 1);
        Tensor acc = LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w));
        ComputeDAG dag = ComputeDAG.of(Quant.requantize(acc, scale, zero));
        try (LocalMeasurer m = LocalMeasurer.of(target, FAST);
                TuneResult r = tune(dag, target, m)) {
            assertThat(r.schedule().steps()).anyMatch(s -> s instanceof TensorizeStep);
            NDArray xs = NDArray.allocate(DType.UINT8, 8, 64), ws = NDArray.allocate(DType.INT8, 32, 64);
            SplittableRandom rnd = new SplittableRandom(5);
            for (long i = 0; i < xs.numElements(); i++) xs.setLongFlat(rnd.nextInt(256), i);
            for (long i = 0; i < ws.numElements(); i++) ws.setLongFlat(rnd.nextInt(256) - 128, i);
            NDArray sc = NDArray.fromFloats(new float[] {0.0005f}, 1);
            NDArray zp = NDArray.allocate(DType.UINT8, 1);
            zp.setLongFlat(100, 0);
            NDArray out = NDArray.allocate(DType.UINT8, 8, 32), ref = NDArray.allocate(DType.UINT8, 8, 32);
            r.kernel().call(xs, ws, sc, zp, out);
            Interpreter.run(Lowering.lower("ref", r.schedule()), xs, ws, sc, zp, ref);
            assertThat(out.toLongArray()).containsExactly(ref.toLongArray());
            long distinct =
                    java.util.Arrays.stream(out.toLongArray()).distinct().count();
            assertThat(distinct).as("the requantized output is not constant").isGreaterThan(4);
        }
    }

    /**
     * The QLinearMatMul shape (u8 x s8 -> s32, then scale, zero point, saturate to u8): the search's
     * sketches include the requantize fused into the tensorized tile (the int32 accumulator computed
     * at the requantize's tile); random programs of those sketches, compiled, equal a plain-Java
     * reference exactly (int32 dot products, float32 scaling, ties to even, saturation).
     */
    @Test
    void int8RequantizeFusedIntoTheTensorizedTileIsExact() {
        CpuTarget target = Target.cpu();
        String why = TensorIntrinsics.get(TensorIntrinsics.VNNI_U8S8).unavailableReason(target);
        assumeTrue(why == null, why);
        int m = 48, n = 64, k = 256;
        Tensor x = Te.placeholder("x", DType.UINT8, m, k);
        Tensor wp = Te.placeholder("w_packed", DType.INT8, n / 16, k / 4, 16, 4);
        Tensor scale = Te.placeholder("scale", DType.FLOAT32, 1);
        Tensor zero = Te.placeholder("zero", DType.UINT8, 1);
        Tensor acc = LowPrecision.matmulPacked(x, wp);
        ComputeDAG dag = ComputeDAG.of(Quant.requantize(acc, scale, zero));
        SearchTask task = AutoSchedule.task(dag, target);
        TargetRules rules = TargetRules.of(target);
        List<Sketch> fused = rules.sketches(task).stream()
                .filter(sk -> sk.steps().stream().anyMatch(st -> st instanceof TensorizeStep))
                .filter(sk -> sk.state().stage(sk.state().stageIndex(acc)).computeAt() == ComputeAtKind.ITER)
                .toList();
        assertThat(fused)
                .as("sketches with the requantize fused into the tensorized tile")
                .hasSize(2);
        var sampled = new InitPopulation(task, fused, rules.initRules(), new FactorizationMemo(), 1000)
                .sample(6, new SplittableRandom(3))
                .candidates();
        assertThat(sampled).isNotEmpty();

        NDArray xs = NDArray.allocate(DType.UINT8, m, k), ws = NDArray.allocate(DType.INT8, n / 16, k / 4, 16, 4);
        SplittableRandom rnd = new SplittableRandom(9);
        for (long i = 0; i < xs.numElements(); i++) xs.setLongFlat(rnd.nextInt(256), i);
        for (long i = 0; i < ws.numElements(); i++) ws.setLongFlat(rnd.nextInt(256) - 128, i);
        float sc = 0.0004f;
        int zp = 120;
        long[] expected = new long[m * n];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                int dot = 0;
                for (int q = 0; q < k; q++)
                    dot += (int) xs.getLong(i, q) * (int) ws.getLong(j / 16, q / 4, j % 16, q % 4);
                float r = (float) Math.rint((float) dot * sc) + zp;
                expected[i * n + j] = (long) Math.max(0f, Math.min(255f, r));
            }
        assertThat(java.util.Arrays.stream(expected).distinct().count()).isGreaterThan(20);
        NDArray scA = NDArray.fromFloats(new float[] {sc}, 1);
        NDArray zpA = NDArray.allocate(DType.UINT8, 1);
        zpA.setLongFlat(zp, 0);
        for (var c : sampled) {
            var f = Lowering.lower("qlinear", c.schedule());
            assertThat(f.toString()).contains("tensorize$");
            NDArray out = NDArray.allocate(DType.UINT8, m, n);
            try (CompiledKernel kern = Backend.forTarget(target).compile(f, target)) {
                kern.call(xs, ws, scA, zpA, out);
            }
            assertThat(out.toLongArray()).as(c.schedule().toString()).isEqualTo(expected);
        }
    }

    @Test
    void bf16DenseTunesOntoDpbf16ps() {
        CpuTarget target = Target.cpu();
        String why = TensorIntrinsics.get(TensorIntrinsics.BF16_DOT).unavailableReason(target);
        assumeTrue(why == null, why);
        Tensor x = Te.placeholder("x", DType.BFLOAT16, 4, 64);
        Tensor w = Te.placeholder("w", DType.BFLOAT16, 32, 64);
        ComputeDAG dag = ComputeDAG.of(LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w)));
        try (LocalMeasurer m = LocalMeasurer.of(target, FAST);
                TuneResult r = tune(dag, target, m)) {
            assertThat(r.schedule().steps()).anyMatch(s -> s instanceof TensorizeStep);
            NDArray xs = NDArray.random(DType.BFLOAT16, 1, 4, 64), ws = NDArray.random(DType.BFLOAT16, 2, 32, 64);
            NDArray out = NDArray.allocate(DType.FLOAT32, 4, 32), ref = NDArray.allocate(DType.FLOAT32, 4, 32);
            r.kernel().call(xs, ws, out);
            Interpreter.run(Lowering.lower("ref", r.schedule()), xs, ws, ref);
            out.assertClose(ref, 1e-5, 1e-5);
        }
    }
}
