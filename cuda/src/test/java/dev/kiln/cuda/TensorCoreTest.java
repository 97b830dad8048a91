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
                new Case(DType.BFLOAT16, true, 64, 32, 32, new TensorCoreSchedule.Tiles(2, 1, 2, 2, 2)),
                new Case(DType.FLOAT32, false, 32, 32, 32, new TensorCoreSchedule.Tiles(2, 1, 1, 2, 2)),
                new Case(DType.FLOAT32, true, 48, 32, 48, new TensorCoreSchedule.Tiles(1, 2, 3, 1, 3)));
    }

    /**
     * The interpreter runs each tensorized program (its pattern) on inputs drawn in float32 and
     * rounded to the input type; the reference sums the unrounded float32 products in double.
     * Each input carries a relative error of at most u (2^-11 for float16's 11-bit significand,
     * 2^-8 for bfloat16's 8 bits), so a product is off by at most (2u + u^2) |a b|; the products of
     * rounded inputs are exact in float32, whose k sums add at most k 2^-24 of the sum of
     * |a b|: the bound is {@code (2u + u^2 + k 2^-24) * sum_k |a b|} per element. TF32 rounds to
     * 11 bits as float16 does, on the GPU; the interpreter's pattern multiplies the float32 inputs
     * (an error of 2^-24 per product), well inside the same bound.
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
            double u = c.in() == DType.BFLOAT16 ? Math.scalb(1.0, -8) : Math.scalb(1.0, -11);
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
        List<Case> all = new ArrayList<>(cases());
        all.add(manyFragments());
        for (Case c : all) {
            CudaModule m = CudaCodegen.generate(GpuTesting.lower(c.name(), c.schedule()));
            assertThat(m.source())
                    .contains("#include <mma.h>", "nvcuda::wmma::mma_sync", "(threadIdx.x >> 5)", "__shared__");
            long warps = c.tiles().warps();
            assertThat(m.launches().getFirst().block()).containsExactly(warps * 32, 1, 1);
            assertThat(m.source()).contains("__launch_bounds__(" + warps * 32 + ")");
            if (c.in() == DType.FLOAT32) {
                assertThat(m.source()).contains("precision::tf32", "__float_to_tf32", "16, 16, 8, float> kiln_acc[");
            }
            modules.add(m);
        }
        String ptx = String.join("\n", GpuTesting.compileWithNvcc(modules));
        assertThat(ptx).contains("wmma.mma.sync", ".m16n16k16.", ".m16n16k8.f32.tf32.tf32.f32");
    }

    /** A warp owning 4 x 8 fragments: more than a warp keeps in registers across the k-stage loop. */
    static Case manyFragments() {
        return new Case(DType.FLOAT16, false, 64, 128, 32, new TensorCoreSchedule.Tiles(1, 1, 4, 8, 2));
    }

    /**
     * C's tiles stay in fragment registers across the reduction: each warp declares one
     * accumulator fragment per 16 x 16 tile it owns, loads them before the k-stage loop and stores
     * them after it, and every mma_sync updates one of them; C is no longer loaded and stored
     * around each 16-deep step. A warp with 32 tiles (over {@code WmmaAccumulators.MAX_FRAGMENTS}) keeps one
     * fragment across the fragments-per-stage loop instead.
     */
    @Test
    void accumulatorsStayInFragmentRegistersAcrossTheReduction() {
        for (Case c : cases()) {
            String src = CudaCodegen.generate(GpuTesting.lower(c.name(), c.schedule()))
                    .source();
            int depth = CudaTensorIntrinsics.kTile(CudaTensorIntrinsics.forInputs(c.in(), c.bT()));
            boolean stages = c.k() > (long) c.tiles().kTiles() * depth; // else the k-stage loop is gone
            int tiles = stages ? c.tiles().tilesI() * c.tiles().tilesJ() : 1;
            assertThat(src)
                    .as(c.name())
                    .contains("nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, " + depth
                            + ", float> kiln_acc[" + tiles + "];")
                    .contains("kept in fragment registers across loop '" + (stages ? "k.0" : "k.1") + "'")
                    .doesNotContain("kiln_fc");
            if (stages) {
                // C's zeroing right before the k-stage loop becomes the fragments' fill: no load of C
                assertThat(src).as(c.name()).contains("C's zeroing is the fragments' fill below");
                assertThat(occurrences(src, "load_matrix_sync(kiln_acc["))
                        .as(c.name())
                        .isZero();
                assertThat(occurrences(src, "fill_fragment(kiln_acc["))
                        .as(c.name())
                        .isEqualTo(tiles);
            } else {
                // the fetches stand between the zeroing and the loop of each tile: loaded
                assertThat(occurrences(src, "load_matrix_sync(kiln_acc["))
                        .as(c.name())
                        .isEqualTo(1);
                assertThat(src).as(c.name()).doesNotContain("fill_fragment");
            }
            assertThat(occurrences(src, "store_matrix_sync(")).as(c.name()).isEqualTo(tiles);
            assertThat(occurrences(src, "mma_sync(kiln_acc[")).as(c.name()).isEqualTo(1);
        }
        Case many = manyFragments();
        String src = CudaCodegen.generate(GpuTesting.lower(many.name(), many.schedule()))
                .source();
        assertThat(src)
                .contains("float> kiln_acc[1];", "kept in fragment registers across loop 'k.1'")
                .contains("load_matrix_sync(kiln_acc[0]") // zeroed for all 32 tiles before the k-stage loop
                .doesNotContain("kiln_fc", "fill_fragment");
    }

    /**
     * The copies of A and B into shared memory are shared among each warp's 32 lanes (every lane
     * ran all of a warp's iterations before): two loops stepping by 32 from the lane's index, each
     * followed by a {@code __syncwarp()}; a third shares C's zeroing where it did not become
     * fragment fills (a single k stage: the fetches come between it and the reduction).
     */
    @Test
    void theWarpsLanesShareTheCopiesIntoSharedMemory() {
        for (Case c : cases()) {
            String src = CudaCodegen.generate(GpuTesting.lower(c.name(), c.schedule()))
                    .source();
            int loops = src.contains("fill_fragment") ? 2 : 3;
            assertThat(occurrences(src, "lanes share loop")).as(c.name()).isEqualTo(loops);
            assertThat(occurrences(src, "(threadIdx.x & 31)")).as(c.name()).isEqualTo(loops);
            assertThat(occurrences(src, " += 32)")).as(c.name()).isEqualTo(loops);
        }
    }

    /**
     * A dense layer with its bias, ReLU and (for float16) the cast of its output fused ({@link
     * TensorCoreSchedule#withEpilogue}).
     */
    record EpilogueCase(DType in, DType out, boolean bT, long m, long n, long k, TensorCoreSchedule.Tiles tiles) {
        String name() {
            return "tc_epilogue_" + in.name().toLowerCase() + "_" + out.name().toLowerCase() + (bT ? "_nt_" : "_nn_")
                    + m + "x" + n + "x" + k;
        }

        ComputeDAG dag() {
            return TensorCoreSchedule.denseBiasRelu(in, out, m, n, k, bT);
        }

        Schedule schedule() {
            return TensorCoreSchedule.withEpilogue(dag(), in, bT, tiles);
        }
    }

    static List<EpilogueCase> epilogueCases() {
        return List.of(
                new EpilogueCase(
                        DType.FLOAT16, DType.FLOAT16, false, 64, 64, 64, new TensorCoreSchedule.Tiles(2, 2, 1, 1, 2)),
                new EpilogueCase(
                        DType.BFLOAT16, DType.FLOAT32, true, 32, 96, 48, new TensorCoreSchedule.Tiles(1, 3, 2, 1, 1)),
                new EpilogueCase(
                        DType.FLOAT32, DType.FLOAT32, false, 48, 64, 32, new TensorCoreSchedule.Tiles(3, 1, 1, 2, 2)));
    }

    /**
     * The fused epilogue's numbers: {@code D = out(max(C + bias, 0))} against the float32 reference
     * of {@link #interpreterMatchesFloat32ReferenceWithinTheInputTypesRounding} with its bound on C
     * (ReLU moves no value further from the reference), plus, for a float16 output, its rounding:
     * half a unit in the last place of 11 bits, 2^-11 of the value, with 2^-24 absolute for the
     * subnormals.
     */
    @Test
    void fusedEpilogueMatchesTheReference() {
        for (EpilogueCase c : epilogueCases()) {
            PrimFunc f = GpuTesting.lower(c.name(), c.schedule());
            assertThat(f.params().stream().map(b -> b.name()))
                    .as("C never reaches global memory")
                    .containsExactly("A", "B", "bias", "D");
            Random rnd = new Random(29 + c.m() * 31 + c.n());
            float[] a = random(rnd, (int) (c.m() * c.k()));
            float[] b = random(rnd, (int) (c.k() * c.n()));
            float[] bias = random(rnd, (int) c.n());
            NDArray na = NDArray.fromFloats(c.in(), a, c.m(), c.k());
            NDArray nb =
                    c.bT() ? NDArray.fromFloats(c.in(), b, c.n(), c.k()) : NDArray.fromFloats(c.in(), b, c.k(), c.n());
            NDArray nbias = NDArray.fromFloats(DType.FLOAT32, bias, c.n());
            NDArray out = NDArray.allocate(c.out(), c.m(), c.n());
            Interpreter.run(f, na, nb, nbias, out);
            double u = c.in() == DType.BFLOAT16 ? Math.scalb(1.0, -8) : Math.scalb(1.0, -11);
            double rel = 2 * u + u * u + c.k() * Math.scalb(1.0, -24);
            int positive = 0;
            for (int i = 0; i < c.m(); i++) {
                for (int j = 0; j < c.n(); j++) {
                    double ref = bias[j], abs = Math.abs(bias[j]);
                    for (int k = 0; k < c.k(); k++) {
                        double p =
                                (double) a[(int) (i * c.k() + k)] * b[(int) (c.bT() ? j * c.k() + k : k * c.n() + j)];
                        ref += p;
                        abs += Math.abs(p);
                    }
                    ref = Math.max(ref, 0);
                    if (ref > 0) positive++;
                    double tol = rel * abs;
                    if (c.out() == DType.FLOAT16)
                        tol += Math.scalb(1.0, -11) * (Math.abs(ref) + tol) + Math.scalb(1.0, -24);
                    double got = out.getDouble(i, j);
                    assertThat(Math.abs(got - ref))
                            .as("%s D[%d, %d] = %s, reference %s", c.name(), i, j, got, ref)
                            .isLessThanOrEqualTo(tol);
                }
            }
            assertThat(positive).as("ReLU passes some values and clips others").isBetween(1, (int) (c.m() * c.n() - 1));
        }
    }

    /**
     * One kernel: the warps accumulate into the block's tile of C in shared memory (fragments
     * stored there after the k-stage loop, then a barrier of the block, since other warps' tiles
     * may be read), then each warp writes its tiles of D, its lanes sharing the elements. nvcc
     * compiles them for sm_90.
     */
    @Test
    void fusedEpilogueIsOneKernelThroughASharedTile() {
        GpuTesting.assumeNvcc();
        List<CudaModule> modules = new ArrayList<>();
        for (EpilogueCase c : epilogueCases()) {
            CudaModule m = CudaCodegen.generate(GpuTesting.lower(c.name(), c.schedule()));
            assertThat(m.launches()).as(c.name()).hasSize(1);
            String src = m.source();
            assertThat(src)
                    .as(c.name())
                    .contains("__shared__ __align__(32) float C_shared[", "store_matrix_sync(&C_shared[")
                    .contains("mem_row_major);\n        __syncwarp();\n        __syncthreads();")
                    .contains("lanes share loop 'i.2@j.2@'");
            assertThat(occurrences(src, "lanes share loop")).as(c.name()).isEqualTo(3); // A, B, D
            assertThat(src).as(c.name()).contains("fill_fragment(kiln_acc[");
            modules.add(m);
        }
        String ptx = String.join("\n", GpuTesting.compileWithNvcc(modules));
        assertThat(ptx).contains("wmma.mma.sync", "wmma.store.d.sync.aligned.row.m16n16k16.shared.f32");
        Schedule s = epilogueCases().get(1).schedule();
        Schedule back = Schedule.fromJson(s.toJson(), epilogueCases().get(1).dag());
        assertThat(back.toJson()).isEqualTo(s.toJson());
        assertThat(CudaCodegen.generate(GpuTesting.lower("replay", back)).source())
                .isEqualTo(CudaCodegen.generate(GpuTesting.lower("replay", s)).source());
    }

    private static int occurrences(String s, String what) {
        int n = 0;
        for (int at = s.indexOf(what); at >= 0; at = s.indexOf(what, at + 1)) n++;
        return n;
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
