package dev.kiln.cuda;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.measure.ScheduleLowerer;
import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.MemoryPlan;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTask;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.autoschedule.scheduler.TaskStatus;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.cuda.codegen.CudaCodegen;
import dev.kiln.cuda.codegen.CudaModule;
import dev.kiln.cuda.compile.Nvcc;
import dev.kiln.cuda.compile.Nvrtc;
import dev.kiln.fixtures.TensorCoreNets;
import dev.kiln.graph.Graph;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.graph.fuse.Partition;
import dev.kiln.graph.pass.ToTensorCores;
import dev.kiln.ir.DType;
import dev.kiln.models.Models;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.TensorizeStep;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A CNN on Tensor Cores ({@link ToTensorCores}, float16; {@link TensorCoreNets#residualCnn}): its three convolutions
 * (a 3-channel 3x3 stem, a 3x3 conv with a residual add after it, on its GEMM's rows, a strided 1x1 projection to
 * 24 channels; its depthwise conv stays float32) and its dense classifier (as a 1x1 GEMM of one row) become
 * implicit-GEMM tasks, each of which gets the Tensor Core sketch; sampled programs of each compute the default
 * lowering's numbers in the interpreter (rtol = atol = 1e-4: the same half-precision products, float32 sums in
 * another order), gather their im2col tiles into shared memory and compile with nvcc for sm_90; the whole network
 * tunes for {@code Target.cuda()} with the interpreter as the GPU (and, with a driver, runs on it within float16's
 * rounding of the reference).
 */
class TensorCoreNetworkTest {

    @Test
    void everyConvTaskGetsTheTensorCoreSketchAndItsProgramsComputeTheReference() {
        ToTensorCores.Result r = ToTensorCores.apply(TensorCoreNets.residualCnn(), DType.FLOAT16);
        assertThat(r.converted()).containsExactly("c1", "c3", "proj", "fc");
        CudaTarget target = CudaTarget.h200();
        List<NetworkTask> gemms = Network.tasks(r.graph(), target).stream()
                .filter(t -> t.description().startsWith("conv2d_gemm"))
                .toList();
        assertThat(gemms).hasSize(4);
        // c3's residual add, ReLU and proj's cast run in its GEMM's kernel (64 rows x 16 channels: nothing rounded up)
        assertThat(gemms).extracting(NetworkTask::description).contains("conv2d_gemm+add+relu+cast [64, 16]");
        List<CudaModule> modules = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        int w = 0;
        for (NetworkTask t : gemms) {
            List<Sketch> tc = TargetRules.cuda().sketches(t.task()).stream()
                    .filter(s -> s.steps().stream().anyMatch(st -> st instanceof TensorizeStep))
                    .toList();
            assertThat(tc).as(t.description()).hasSize(1);
            InitPopulation.Result sampled =
                    TargetRules.cuda().population(t.task(), tc).sample(2, new SplittableRandom(11 + w));
            assertThat(sampled.candidates())
                    .as(t.description() + ": " + sampled.stats())
                    .isNotEmpty();
            int k = 0;
            for (Candidate c : sampled.candidates()) {
                String name = "tc_conv_t" + w + "_" + k++;
                PrimFunc f = ScheduleLowerer.forTarget(target).lower(t.task(), c.schedule());
                f = new PrimFunc(name, f.params(), f.body());
                String diff = GpuTesting.compareWithDefault(t.task().dag(), f, 3 + k, 1e-4);
                if (diff != null) failures.add(name + " (" + t.description() + "): " + diff);
                CudaModule m = CudaCodegen.generate(f);
                assertThat(m.source()).as(name).contains("nvcuda::wmma::mma_sync", "im2col_shared");
                if (k == 1) modules.add(m);
            }
            w++;
        }
        assertThat(failures).isEmpty();
        GpuTesting.assumeNvcc();
        assertThat(String.join("\n", GpuTesting.compileWithNvcc(modules))).contains("wmma.mma.sync");
    }

    /**
     * ResNet-50 and MobileNet-V2 at 224x224 through {@link ToTensorCores}: every conv2d_gemm task (the 7x7 stem of 147
     * taps, strided 1x1 projections, 7x7 outputs of 49 pixels, 24- and 1000-wide outputs rounded up to 16) gets
     * exactly one Tensor Core sketch, and only the depthwise convs stay float32.
     */
    @Test
    void everyConvOfResNet50AndMobileNetV2GetsTheTensorCoreSketch() {
        CudaTarget target = CudaTarget.h200();
        for (Graph net : List.of(Models.resnet50(1, 224, 3), Models.mobilenetV2(1, 224, 3))) {
            ToTensorCores.Result r = ToTensorCores.apply(net, DType.FLOAT16);
            assertThat(r.kept().values()).as(net.name()).allMatch(why -> why.contains("groups"));
            List<NetworkTask> gemms = Network.tasks(r.graph(), target).stream()
                    .filter(t -> t.description().startsWith("conv2d_gemm"))
                    .toList();
            assertThat(gemms).as(net.name()).isNotEmpty();
            for (NetworkTask t : gemms) {
                assertThat(TargetRules.cuda().sketches(t.task()))
                        .as(net.name() + " " + t.description())
                        .filteredOn(s -> s.steps().stream().anyMatch(st -> st instanceof TensorizeStep))
                        .hasSize(1);
            }
        }
    }

    /**
     * A chain of three convs (3x3 with bias and ReLU, 1x1 to 24 channels with bias, 1x1): each GEMM's kernel also
     * computes its bias, ReLU and the next layer's cast on its rows, the reshape between the first two is a view (no
     * kernel), and the first two tasks' sampled Tensor Core programs (epilogue and gathered operand in one kernel)
     * match the default lowering in the interpreter.
     */
    @Test
    void aChainOfConvsRunsOneKernelPerLayerWhereNothingIsRoundedUp() {
        Graph net = TensorCoreNets.convChain();
        Graph tc = ToTensorCores.apply(net, DType.FLOAT16).graph();
        CudaTarget target = CudaTarget.h200();
        Partition p = Network.partition(tc, target);
        assertThat(p.groups().stream().filter(gr -> MemoryPlan.isView(p, gr)).map(gr -> gr.output()))
                .containsExactly("ra.f16");
        List<NetworkTask> tasks = Network.tasks(tc, target);
        assertThat(tasks)
                .extracting(NetworkTask::description)
                .contains("conv2d_gemm+bias_add+relu+cast [64, 16]", "conv2d_gemm+bias_add+cast [64, 32]");
        List<String> failures = new ArrayList<>();
        int w = 0;
        for (NetworkTask t : tasks) {
            if (!t.description().contains("+cast")) continue;
            List<Sketch> sk = TargetRules.cuda().sketches(t.task()).stream()
                    .filter(s -> s.steps().stream().anyMatch(st -> st instanceof TensorizeStep))
                    .toList();
            assertThat(sk).as(t.description()).hasSize(1);
            for (Candidate cand : TargetRules.cuda()
                    .population(t.task(), sk)
                    .sample(2, new SplittableRandom(5 + w))
                    .candidates()) {
                PrimFunc f = ScheduleLowerer.forTarget(target).lower(t.task(), cand.schedule());
                String diff = GpuTesting.compareWithDefault(t.task().dag(), f, 9 + w, 1e-3);
                if (diff != null) failures.add(t.description() + ": " + diff);
                assertThat(CudaCodegen.generate(f).launches())
                        .as(t.description())
                        .hasSize(1);
            }
            w++;
        }
        assertThat(w).isEqualTo(2);
        assertThat(failures).isEmpty();
    }

    /**
     * Two residual blocks with float16 activations ({@link ToTensorCores.Activations#HALF}): the GEMM task that widens
     * the block input on its rows for the residual add, adds, applies ReLU and writes the next block input in float16
     * gets the Tensor Core sketch, and its sampled programs (one kernel each) match the default lowering.
     */
    @Test
    void aResidualAddOfAHalfActivationRunsInTheGemmKernel() {
        Graph tc = ToTensorCores.apply(TensorCoreNets.residualBlocks(8), DType.FLOAT16, ToTensorCores.Activations.HALF)
                .graph();
        CudaTarget target = CudaTarget.h200();
        NetworkTask t = Network.tasks(tc, target).stream()
                .filter(x -> x.description().startsWith("conv2d_gemm+cast+add+relu+cast "))
                .findFirst()
                .orElseThrow();
        List<Sketch> sk = TargetRules.cuda().sketches(t.task()).stream()
                .filter(s -> s.steps().stream().anyMatch(st -> st instanceof TensorizeStep))
                .toList();
        assertThat(sk).as(t.description()).hasSize(1);
        List<String> failures = new ArrayList<>();
        List<CudaModule> modules = new ArrayList<>();
        int k = 0;
        for (Candidate cand : TargetRules.cuda()
                .population(t.task(), sk)
                .sample(2, new SplittableRandom(21))
                .candidates()) {
            PrimFunc f = ScheduleLowerer.forTarget(target).lower(t.task(), cand.schedule());
            f = new PrimFunc("tc_half_res_" + k++, f.params(), f.body());
            String diff = GpuTesting.compareWithDefault(t.task().dag(), f, 17 + k, 1e-3);
            if (diff != null) failures.add(t.description() + ": " + diff);
            CudaModule m = CudaCodegen.generate(f);
            assertThat(m.launches()).as(t.description()).hasSize(1);
            modules.add(m);
        }
        assertThat(k).isPositive();
        assertThat(failures).isEmpty();
        GpuTesting.assumeNvcc();
        assertThat(String.join("\n", GpuTesting.compileWithNvcc(modules))).contains("wmma.mma.sync");
    }

    /**
     * ResNet-50 at 64x64 on Tensor Cores: its max pool (read by two converted convs, the first block's and its
     * projection) and its global average pool (read through a reshape by the classifier) write their values in
     * float16 in their own kernels ({@code FuseOps.isNarrowingEpilogue}, no cast kernel), and sampled GPU programs of
     * both tasks match the default lowering in the interpreter and compile with nvcc.
     */
    @Test
    void aPoolWritesItsHalfValueInItsOwnKernel() {
        Graph tc = ToTensorCores.apply(Models.resnet50(1, 64, 3), DType.FLOAT16, ToTensorCores.Activations.HALF)
                .graph();
        CudaTarget target = CudaTarget.h200();
        List<NetworkTask> pools = Network.tasks(tc, target).stream()
                .filter(x -> x.description().matches(".*(max_pool2d|global_avg_pool2d)(\\+reshape)*\\+cast .*"))
                .toList();
        assertThat(pools).extracting(NetworkTask::description).hasSize(2);
        List<String> failures = new ArrayList<>();
        List<CudaModule> modules = new ArrayList<>();
        int k = 0;
        for (NetworkTask t : pools) {
            for (Candidate cand : TargetRules.cuda()
                    .population(t.task(), TargetRules.cuda().sketches(t.task()))
                    .sample(2, new SplittableRandom(31 + k))
                    .candidates()) {
                PrimFunc f = ScheduleLowerer.forTarget(target).lower(t.task(), cand.schedule());
                f = new PrimFunc("pool_half_" + k++, f.params(), f.body());
                String diff = GpuTesting.compareWithDefault(t.task().dag(), f, 5 + k, 1e-6);
                if (diff != null) failures.add(t.description() + ": " + diff);
                modules.add(CudaCodegen.generate(f));
            }
        }
        assertThat(k).isGreaterThanOrEqualTo(2);
        assertThat(failures).isEmpty();
        GpuTesting.assumeNvcc();
        GpuTesting.compileWithNvcc(modules);
    }

    @Test
    void theNetworkTunesForCuda(@TempDir Path dir) {
        assumeTrue(
                Nvrtc.availability().available() || Nvcc.find().isPresent(),
                "no CUDA compiler: " + Nvrtc.availability());
        Graph net = TensorCoreNets.residualCnn();
        Graph tc = ToTensorCores.apply(net, DType.FLOAT16).graph();
        CudaTarget target = Target.cuda();
        List<NetworkTask> tasks = Network.tasks(tc, target);
        GpuTuneTest.InterpreterGpuMeasurer m = new GpuTuneTest.InterpreterGpuMeasurer(target);
        NetworkTuneOptions opts = NetworkTuneOptions.builder()
                .trials(3 * tasks.size())
                .measuresPerRound(3)
                .seed(3)
                .logFile(dir.resolve("tc-net.jsonl"))
                .measurer(m)
                .build();
        try (CompiledNetwork cn = Network.tune(tc, target, opts)) {
            assertThat(cn.tuning().orElseThrow().tasks())
                    .allSatisfy(t -> assertThat(t.status()).isEqualTo(TaskStatus.ALIVE));
            if (CudaDriver.status().available()) {
                try (NDArray in = NDArray.random(FLOAT32, 1, 1, 8, 8, 3);
                        NodeRunner ref = NodeRunner.interpreter();
                        NDArray out = cn.run(in)) {
                    out.assertClose(ReferenceExecutor.run(net, ref, in).getFirst(), 0x1p-7, 0x1p-7);
                }
            }
        }
    }
}
