package dev.kiln.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.cuda.codegen.CudaCodegen;
import dev.kiln.cuda.codegen.CudaModule;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.CudaTensorIntrinsics;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.ScheduleException;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.target.CudaTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Tensor Core (wmma) schedules: the interpreter's numbers against a float32 reference, the
 * generated CUDA C (warp-level launch, fragments from shared memory) compiled by nvcc for sm_90,
 * the JSON round trip and replay, and the refusals.
 */
class TensorCoreTest {

    record Case(DType in, boolean bT, long m, long n, long k, TensorCoreSchedule.Tiles tiles) {
        String name() {
            return "tc_" + in.name().toLowerCase() + (bT ? "_nt_" : "_nn_") + m + "x" + n + "x" + k;
        }

        ComputeDAG dag() {
            return TensorCoreSchedule.matmul(in, m, n, k, bT);
        }

        Schedule schedule() {
            return TensorCoreSchedule.of(dag(), in, bT, tiles);
        }
    }

    static List<Case> cases() {
        return List.of(
                new Case(DType.FLOAT16, false, 64, 64, 64, new TensorCoreSchedule.Tiles(2, 2, 1, 1, 2)),
                new Case(DType.FLOAT16, true, 32, 96, 48, new TensorCoreSchedule.Tiles(1, 3, 2, 1, 1)),
                new Case(DType.BFLOAT16, false, 48, 32, 96, new TensorCoreSchedule.Tiles(3, 1, 1, 2, 3)),
                new Case(DType.BFLOAT16, true, 64, 32, 32, new TensorCoreSchedule.Tiles(2, 1, 2, 2, 2)));
    }

    /**
     * The interpreter runs each tensorized program (its pattern) on inputs drawn in float32 and
     * rounded to the input type; the reference sums the unrounded float32 products in double.
     * Each input carries a relative error of at most u (2^-11 for float16's 11-bit significand,
     * 2^-8 for bfloat16's 8 bits), so a product is off by at most (2u + u^2) |a b|; the products of
     * rounded inputs are exact in float32, whose k sums add at most k 2^-24 of the sum of
     * |a b|: the bound is {@code (2u + u^2 + k 2^-24) * sum_k |a b|} per element.
     */
    @Test
    void interpreterMatchesFloat32ReferenceWithinTheInputTypesRounding() {
        for (Case c : cases()) {
            PrimFunc f = GpuTesting.lower(c.name(), c.schedule());
            assertThat(f.toString()).contains("tensorize$" + CudaTensorIntrinsics.forInputs(c.in(), c.bT()));
            Random rnd = new Random(17 + c.m() * 31 + c.n());
            float[] a = random(rnd, (int) (c.m() * c.k()));
            float[] b = random(rnd, (int) (c.k() * c.n()));
            NDArray na = NDArray.fromFloats(c.in(), a, c.m(), c.k());
            NDArray nb =
                    c.bT() ? NDArray.fromFloats(c.in(), b, c.n(), c.k()) : NDArray.fromFloats(c.in(), b, c.k(), c.n());
            NDArray out = NDArray.allocate(DType.FLOAT32, c.m(), c.n());
            Interpreter.run(f, na, nb, out);
            double u = c.in() == DType.FLOAT16 ? Math.scalb(1.0, -11) : Math.scalb(1.0, -8);
            double rel = 2 * u + u * u + c.k() * Math.scalb(1.0, -24);
            for (int i = 0; i < c.m(); i++) {
                for (int j = 0; j < c.n(); j++) {
                    double ref = 0, abs = 0;
                    for (int k = 0; k < c.k(); k++) {
                        double p =
                                (double) a[(int) (i * c.k() + k)] * b[(int) (c.bT() ? j * c.k() + k : k * c.n() + j)];
                        ref += p;
                        abs += Math.abs(p);
                    }
                    double got = out.getDouble(i, j);
                    assertThat(Math.abs(got - ref))
                            .as("%s C[%d, %d] = %s, reference %s", c.name(), i, j, got, ref)
                            .isLessThanOrEqualTo(rel * abs);
                }
            }
        }
    }

    private static float[] random(Random rnd, int n) {
        float[] out = new float[n];
        for (int i = 0; i < n; i++) out[i] = rnd.nextFloat() * 2 - 1;
        return out;
    }

    @Test
    void everyTensorCoreKernelCompilesWithNvccForSm90() {
        GpuTesting.assumeNvcc();
        List<CudaModule> modules = new ArrayList<>();
        for (Case c : cases()) {
            CudaModule m = CudaCodegen.generate(GpuTesting.lower(c.name(), c.schedule()));
            assertThat(m.source())
                    .contains("#include <mma.h>", "nvcuda::wmma::mma_sync", "(threadIdx.x >> 5)", "__shared__");
            long warps = c.tiles().warps();
            assertThat(m.launches().getFirst().block()).containsExactly(warps * 32, 1, 1);
            assertThat(m.source()).contains("__launch_bounds__(" + warps * 32 + ")");
            modules.add(m);
        }
        for (String ptx : GpuTesting.compileWithNvcc(modules)) assertThat(ptx).contains("wmma.mma.sync");
    }

    @Test
    void tensorizedGpuScheduleRoundTripsThroughJsonAndReplays() {
        Case c = cases().get(1);
        Schedule s = c.schedule();
        String json = s.toJson();
        assertThat(json).contains("\"TS\"", CudaTensorIntrinsics.WMMA_F16_NT);
        Schedule back = Schedule.fromJson(json, c.dag()); // a DAG built again, as a tuning log is replayed
        assertThat(back.toJson()).isEqualTo(json);
        String first = CudaCodegen.generate(GpuTesting.lower("replay", s)).source();
        String again = CudaCodegen.generate(GpuTesting.lower("replay", back)).source();
        assertThat(again).isEqualTo(first);
    }

    @Test
    void refusesOldGpusWrongShapesAndWrongTypes() {
        Case c = cases().getFirst();
        PrimFunc f = GpuTesting.lower(c.name(), c.schedule());
        CudaTarget turing = new CudaTarget("sm_75", 1024, 48 * 1024, 32);
        assertThatThrownBy(() -> CudaBackend.checkIntrinsics(f, turing))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("sm_80")
                .hasMessageContaining("sm_75");
        assertThat(new CudaBackend().intrinsics(turing)).isEmpty();
        assertThat(new CudaBackend().intrinsics(CudaTarget.h200()))
                .containsExactlyInAnyOrderElementsOf(CudaTensorIntrinsics.ALL);
        CudaBackend.checkIntrinsics(f, CudaTarget.h200());

        // an 8-deep k tile is not the fragment's 16 (shape)
        assertThatThrownBy(() -> {
                    ScheduleBuilder s = ScheduleBuilder.on(c.dag());
                    ScheduleBuilder.StageRef st = s.stage("C");
                    st.split("i", 16);
                    st.split("j", 16);
                    st.split("k", 8);
                    st.reorder("i.0", "j.0", "k.0", "i.1", "j.1", "k.1");
                    st.tensorize("i.1", CudaTensorIntrinsics.WMMA_F16_NN);
                })
                .isInstanceOf(ScheduleException.class)
                .hasMessageContaining("extent 8");
        // float16 inputs are not the bfloat16 intrinsic's (dtype)
        assertThatThrownBy(() -> TensorCoreSchedule.of(
                        c.dag(), DType.BFLOAT16, false, new TensorCoreSchedule.Tiles(2, 2, 1, 1, 2)))
                .isInstanceOf(ScheduleException.class)
                .hasMessageContaining("not the pattern");
        // B read as [j, k] is not the nn intrinsic's layout
        Case nt = cases().get(1);
        assertThatThrownBy(() -> TensorCoreSchedule.of(nt.dag(), DType.FLOAT16, false, nt.tiles()))
                .isInstanceOf(ScheduleException.class)
                .hasMessageContaining("layout");
        assertThat(TensorIntrinsics.get(CudaTensorIntrinsics.WMMA_BF16_NN).unavailableReason(CudaTarget.h200()))
                .isNull();
    }
}
