package dev.kiln.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.measure.ScheduleLowerer;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.cuda.codegen.CudaCodegen;
import dev.kiln.cuda.codegen.CudaModule;
import dev.kiln.ir.DType;
import dev.kiln.ir.IterVar;
import dev.kiln.nn.ConvGemm;
import dev.kiln.nn.ConvParams;
import dev.kiln.schedule.CudaTensorIntrinsics;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.TensorizeStep;
import dev.kiln.target.CudaTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The Tensor Core sketch rule (TensorCoreTiling in the CUDA rules): a float16/bfloat16 matmul,
 * dense and batch_matmul, alone or with an element-wise epilogue (a dense layer's bias, ReLU and
 * cast as one stage or three, a batch_matmul's scaling), and implicit GEMM convs (ConvGemm: the im2col gather
 * copied from the image into shared memory), get a tensorized sketch with no hint, an
 * older GPU and float32 do not (float32 does where the target allows TF32),
 * and its samples lower, compute the default lowering's numbers in the interpreter (the same
 * rounded inputs, products exact in float32, only the order of the float32 sums differs: rtol =
 * atol = 1e-4) and compile with nvcc for sm_90 (the first of each workload).
 */
class TensorCoreSketchTest {
    private static final CudaTarget TARGET = CudaTarget.h200();

    static List<ComputeDAG> workloads() {
        Tensor dense = dense(DType.BFLOAT16, 32, 48, 64);
        Tensor a = Te.placeholder("a", DType.FLOAT16, 2, 32, 48), b = Te.placeholder("b", DType.FLOAT16, 2, 48, 32);
        Tensor bmm = Te.computeN("bmm", "batch_matmul", Shape.of(2, 32, 32), idx -> {
            IterVar k = Te.reduceAxis(48, "k");
            return Te.sum(
                    k,
                    a.at(idx.get(0), idx.get(1), k)
                            .cast(DType.FLOAT32)
                            .mul(b.at(idx.get(0), k, idx.get(2)).cast(DType.FLOAT32)));
        });
        Tensor bmmOut = bmm;
        Tensor scaled = Te.computeN(
                "scaled", "scale_add", Shape.of(2, 32, 32), idx -> bmmOut.at(idx.get(0), idx.get(1), idx.get(2))
                        .mul(Te.constant(DType.FLOAT32, 0.125))
                        .add(Te.constant(DType.FLOAT32, 1)));
        return List.of(
                TensorCoreSchedule.matmul(DType.FLOAT16, 64, 64, 64, false),
                ComputeDAG.of(dense),
                ComputeDAG.of(bmm),
                // fused epilogues: a dense layer's bias and ReLU, a batch_matmul scaled (attention scores)
                TensorCoreSchedule.denseBiasRelu(DType.BFLOAT16, DType.FLOAT32, 64, 96, 32, true),
                denseChain(),
                ComputeDAG.of(scaled),
                // implicit GEMM convs: 3x3 pad 1 on float16 (36 pixels in 48 rows, 72 taps in 80), 3x3 stride 2 on
                // bfloat16 (25 pixels in 32 rows)
                convGemm(DType.FLOAT16, 6, 8, 1, 48, 80, 32),
                convGemm(DType.BFLOAT16, 9, 16, 2, 32, 144, 16));
    }

    /** The first workload index of {@link #workloads()}'s implicit GEMM convs. */
    static final int FIRST_CONV = 6;

    /**
     * A 3x3 conv2d (padding 1) of {@code [1, hw, hw, c]} as {@link ConvGemm#conv2dNhwcGemm}, weight {@code [cols,
     * co]}.
     */
    static ComputeDAG convGemm(DType t, long hw, long c, long stride, long rows, long cols, long co) {
        Tensor x = Te.placeholder("x", t, 1, hw, hw, c), w = Te.placeholder("w", t, cols, co);
        return ComputeDAG.of(ConvGemm.conv2dNhwcGemm(x, w, 3, 3, ConvParams.of(2, stride, 1), rows));
    }

    /** A float16 dense layer as a network's graph gives it: bias add, ReLU and the cast to float16 as three stages. */
    static ComputeDAG denseChain() {
        Tensor bias = Te.placeholder("bias", DType.FLOAT32, 64);
        Tensor dense = dense(DType.FLOAT16, 48, 64, 32);
        Tensor add = Te.computeN("add", "add", Shape.of(48, 64), idx -> dense.at(idx.get(0), idx.get(1))
                .add(bias.at(idx.get(1))));
        Tensor relu = Te.computeN(
                "relu",
                "relu",
                Shape.of(48, 64),
                idx -> Te.maximum(add.at(idx.get(0), idx.get(1)), Te.constant(DType.FLOAT32, 0)));
        Tensor half = Te.computeN("cast", "cast", Shape.of(48, 64), idx -> relu.at(idx.get(0), idx.get(1))
                .cast(DType.FLOAT16));
        return ComputeDAG.of(half);
    }

    /** {@code dense[i, j] = sum_k float32(x[i, k]) * float32(w[j, k])}, x {@code [m, k]}, w {@code [n, k]}. */
    static Tensor dense(DType in, long m, long n, long k) {
        Tensor x = Te.placeholder("x", in, m, k), w = Te.placeholder("w", in, n, k);
        return Te.computeN("dense", "dense", Shape.of(m, n), idx -> {
            IterVar r = Te.reduceAxis(k, "k");
            return Te.sum(
                    r,
                    x.at(idx.get(0), r)
                            .cast(DType.FLOAT32)
                            .mul(w.at(idx.get(1), r).cast(DType.FLOAT32)));
        });
    }

    private static boolean tensorized(Sketch s) {
        return s.steps().stream().anyMatch(st -> st instanceof TensorizeStep);
    }

    @Test
    void offeredOnlyForHalfPrecisionOnSm80AndNewer() {
        for (ComputeDAG dag : workloads()) {
            List<Sketch> sketches = TargetRules.cuda().sketches(AutoSchedule.task(dag, TARGET));
            assertThat(sketches.stream().filter(TensorCoreSketchTest::tensorized))
                    .hasSize(1);
            assertThat(sketches.size()).isGreaterThan(1); // the usual sketches stay
            CudaTarget turing = new CudaTarget("sm_75", 1024, 48 * 1024, 32);
            assertThat(TargetRules.cuda().sketches(AutoSchedule.task(dag, turing)))
                    .noneMatch(TensorCoreSketchTest::tensorized);
        }
        ComputeDAG f32 = GpuSampledProgramsTest.workloads().getFirst();
        assertThat(TargetRules.cuda().sketches(AutoSchedule.task(f32, TARGET)))
                .noneMatch(TensorCoreSketchTest::tensorized);
        // float32 on TF32 Tensor Cores only where the target allows it
        ComputeDAG tf32 = TensorCoreSchedule.matmul(DType.FLOAT32, 32, 48, 64, false);
        assertThat(TargetRules.cuda().sketches(AutoSchedule.task(tf32, TARGET)))
                .noneMatch(TensorCoreSketchTest::tensorized);
        assertThat(TargetRules.cuda().sketches(AutoSchedule.task(tf32, TARGET.withTf32(true))))
                .filteredOn(TensorCoreSketchTest::tensorized)
                .singleElement()
                .satisfies(sk -> assertThat(sk.steps())
                        .anyMatch(st -> st instanceof TensorizeStep t
                                && t.intrinsic().equals(CudaTensorIntrinsics.WMMA_TF32_NN)));
    }

    @Test
    void sampledTensorCoreProgramsComputeTheReferenceAndCompile() {
        List<CudaModule> modules = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        int w = 0;
        List<ComputeDAG> dags = new ArrayList<>(workloads());
        dags.add(TensorCoreSchedule.matmul(DType.FLOAT32, 32, 48, 64, true)); // a TF32 dense
        for (ComputeDAG dag : dags) {
            CudaTarget target = w == dags.size() - 1 ? TARGET.withTf32(true) : TARGET;
            SearchTask task = AutoSchedule.task(dag, target);
            List<Sketch> tc = TargetRules.cuda().sketches(task).stream()
                    .filter(TensorCoreSketchTest::tensorized)
                    .toList();
            InitPopulation pop = TargetRules.cuda().population(task, tc);
            InitPopulation.Result r = pop.sample(2, new SplittableRandom(7 + w));
            assertThat(r.candidates())
                    .as("samples of workload " + w + ": " + r.stats())
                    .hasSizeGreaterThanOrEqualTo(2);
            int k = 0;
            for (Candidate c : r.candidates()) {
                String name = "tc_sampled_w" + w + "_" + k++;
                Schedule sch = c.schedule();
                PrimFunc f;
                try {
                    f = ScheduleLowerer.forTarget(target).lower(task, sch);
                } catch (RuntimeException e) {
                    failures.add(name + " does not lower: " + e.getMessage() + "\n" + sch.toJavaSource());
                    continue;
                }
                f = new PrimFunc(name, f.params(), f.body());
                String diff = GpuTesting.compareWithDefault(dag, f, 5 + k, 1e-4);
                if (diff != null) failures.add(name + ": " + diff);
                CudaModule m = CudaCodegen.generate(f);
                assertThat(m.source()).contains("nvcuda::wmma::mma_sync");
                assertThat(m.source())
                        .as(name + " keeps its accumulators in fragments")
                        .contains("mma_sync(kiln_acc[");
                if (w >= FIRST_CONV && w < FIRST_CONV + 2) {
                    // implicit GEMM: the im2col tiles gathered from the image into shared memory, never written
                    assertThat(m.launches()).as(name).hasSize(1);
                    assertThat(f.params()).as(name).extracting(b -> b.name()).doesNotContain("im2col");
                    assertThat(m.source()).as(name).contains("im2col_shared");
                }
                if (w >= 3 && w <= 5) {
                    // a fused epilogue: one kernel, the matmul's block tile in shared memory
                    assertThat(m.launches()).as(name).hasSize(1);
                    assertThat(m.source()).as(name).contains("__shared__ __align__(32) float ", "__syncthreads();");
                }
                assertThat(Schedule.fromJson(sch.toJson(), dag).toJson()).isEqualTo(sch.toJson());
                if (k == 1) modules.add(m); // nvcc takes a while on mma.h: one kernel per workload
            }
            w++;
        }
        assertThat(failures).isEmpty();
        assertThat(CudaTensorIntrinsics.ALL).hasSize(6);
        GpuTesting.assumeNvcc();
        String ptx = String.join("\n", GpuTesting.compileWithNvcc(modules));
        assertThat(ptx).contains("wmma.mma.sync");
    }
}
