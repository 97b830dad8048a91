package dev.kiln.autoschedule.sketch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.LowPrecision;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.AmxTensorIntrinsics;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The tensorizing sketch rule with AMX tiles, on a Sapphire Rapids target (nothing is compiled or run: the
 * programs are sampled and interpreted, so this runs on any machine): with tiles offered, a packed u8 x s8 or bf16
 * matmul is tiled 16 x 16 x (64 bytes of k) around {@code tdpbusd} / {@code tdpbf16ps}, and every sampled program
 * computes the reference (int8 exactly against plain Java, bf16 within float32 rounding of exact products); the
 * default CPU rule (no {@code -Dkiln.search.amx}) keeps to the VNNI / BF16 dot products on the same target.
 */
class AmxTilingTest {
    private static final CpuTarget SPR = Target.cpu()
            .withCpu(
                    "sapphirerapids",
                    "+avx2,+fma,+avx512f,+avx512dq,+avx512bw,+avx512vl,+avx512vnni,+avx512bf16,+amx-tile,+amx-bf16,"
                            + "+amx-int8")
            .withCores(4);

    private static TargetRules withTiles() {
        TargetRules cpu = TargetRules.cpu();
        return new TargetRules(
                cpu.sketchRules().stream()
                        .map(r -> r instanceof MultiLevelTilingTensorize ? MultiLevelTilingTensorize.cpuWithTiles() : r)
                        .toList(),
                cpu.initRules(),
                cpu.mutations());
    }

    private static ComputeDAG packed(DType a, DType b, long m, long n, long k) {
        Tensor x = Te.placeholder("x", a, m, k);
        Tensor w = Te.placeholder("w", b, n, k);
        return ComputeDAG.of(LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w)));
    }

    private static String intrinsicOf(LoopState s) {
        Stage st = s.stage(s.stageIndex("matmul_packed"));
        return st.tensorized() == null ? null : st.tensorized().intrinsic();
    }

    @Test
    void int8MatmulSamplesAmxTilesThatComputeTheReference() {
        int m = 32, n = 32, k = 128;
        ComputeDAG dag = packed(DType.UINT8, DType.INT8, m, n, k);
        SearchTask task = SearchTask.of(dag, SPR);
        TargetRules rules = withTiles();
        List<Sketch> sketches = rules.sketches(task);
        assertThat(sketches).isNotEmpty().allMatch(sk -> AmxTensorIntrinsics.u8s8(2)
                .equals(intrinsicOf(sk.state())));
        var res = rules.population(task, sketches).sample(6, new SplittableRandom(17));
        assertThat(res.candidates()).isNotEmpty();
        NDArray x = NDArray.allocate(DType.UINT8, m, k), w = NDArray.allocate(DType.INT8, n, k);
        SplittableRandom r = new SplittableRandom(18);
        for (long i = 0; i < x.numElements(); i++) x.setLongFlat(r.nextInt(256), i);
        for (long i = 0; i < w.numElements(); i++) w.setLongFlat(r.nextInt(256) - 128, i);
        for (Candidate c : res.candidates()) {
            assertThat(intrinsicOf(c.state())).isEqualTo(AmxTensorIntrinsics.u8s8(2));
            NDArray out = NDArray.allocate(DType.INT32, m, n);
            Interpreter.run(Lowering.lower("amx", c.schedule()), x, w, out);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    long acc = 0;
                    for (int q = 0; q < k; q++) acc += x.getLong(i, q) * w.getLong(j, q);
                    assertThat(out.getLong(i, j))
                            .as("out[%d, %d] of %s", i, j, c.schedule().toJson())
                            .isEqualTo(acc);
                }
        }
    }

    @Test
    void bf16MatmulSamplesAmxTilesWithinFloat32Rounding() {
        int m = 16, n = 32, k = 64;
        ComputeDAG dag = packed(DType.BFLOAT16, DType.BFLOAT16, m, n, k);
        SearchTask task = SearchTask.of(dag, SPR);
        TargetRules rules = withTiles();
        var res = rules.population(task, rules.sketches(task)).sample(4, new SplittableRandom(19));
        assertThat(res.candidates()).isNotEmpty();
        NDArray x = NDArray.random(DType.BFLOAT16, 20, m, k), w = NDArray.random(DType.BFLOAT16, 21, n, k);
        NDArray ref = NDArray.allocate(DType.FLOAT32, m, n);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double acc = 0;
                for (int q = 0; q < k; q++) acc += x.getDouble(i, q) * w.getDouble(j, q);
                ref.setDoubleFlat(acc, (long) i * n + j);
            }
        for (Candidate c : res.candidates()) {
            assertThat(intrinsicOf(c.state())).isEqualTo(AmxTensorIntrinsics.bf16(2));
            NDArray out = NDArray.allocate(DType.FLOAT32, m, n);
            Interpreter.run(Lowering.lower("amx", c.schedule()), x, w, out);
            out.assertClose(ref, 1e-5, 1e-5);
        }
    }

    @Test
    void theDefaultRuleKeepsToTheDotProducts() {
        ComputeDAG dag = packed(DType.UINT8, DType.INT8, 32, 32, 128);
        SearchTask task = SearchTask.of(dag, SPR);
        assertThat(MultiLevelTilingTensorize.offered(SPR)).contains(AmxTensorIntrinsics.AMX_U8S8);
        assertThat(TargetRules.cpu().sketches(task))
                .isNotEmpty()
                .allMatch(sk -> TensorIntrinsics.VNNI_U8S8.equals(intrinsicOf(sk.state())));
    }
}
