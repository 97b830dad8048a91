package dev.kiln.cuda;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.placeholder;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.measure.ScheduleLowerer;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.cuda.codegen.CudaCodegen;
import dev.kiln.cuda.codegen.CudaModule;
import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.Elementwise;
import dev.kiln.nn.Linalg;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Programs the GPU sketch and annotation rules sample ({@link TargetRules#cuda()}) for a matmul, a conv2d
 * with padding, bias and relu, and a dense layer: every sample lowers through the GPU passes for
 * the H200's limits (the annotation's limit checks leave nothing over them), runs in the
 * interpreter to the default lowering's numbers (rtol = atol = 1e-4: tiles reorder the sums), and
 * compiles with nvcc for sm_90 (one nvcc run for all).
 */
class GpuSampledProgramsTest {
    private static final CudaTarget TARGET = Target.cuda();

    static List<ComputeDAG> workloads() {
        Tensor a = placeholder("A", FLOAT32, 64, 48), b = placeholder("B", FLOAT32, 48, 40);
        Tensor data = placeholder("data", FLOAT32, 1, 8, 10, 10), w = placeholder("w", FLOAT32, 8, 8, 3, 3);
        Tensor bias = placeholder("bias", FLOAT32, 8);
        Tensor conv = Elementwise.biasAdd(Conv.conv2dNchw(data, w, 1, 1), bias, 1);
        Tensor x = placeholder("x", FLOAT32, 16, 36),
                wt = placeholder("wt", FLOAT32, 24, 36),
                bd = placeholder("bd", FLOAT32, 24);
        return List.of(
                ComputeDAG.of(Linalg.matmul(a, b)),
                ComputeDAG.of(Activation.relu(conv)),
                ComputeDAG.of(Linalg.dense(x, wt, bd)));
    }

    @Test
    void sampledProgramsLowerComputeTheReferenceAndCompile() {
        List<CudaModule> modules = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        int w = 0;
        for (ComputeDAG dag : workloads()) {
            SearchTask task = AutoSchedule.task(dag, TARGET);
            InitPopulation pop =
                    TargetRules.cuda().population(task, TargetRules.cuda().sketches(task));
            InitPopulation.Result r = pop.sample(6, new SplittableRandom(100 + w));
            assertThat(r.candidates())
                    .as("samples of workload " + w + ": " + r.stats())
                    .hasSizeGreaterThanOrEqualTo(4);
            int k = 0;
            for (Candidate c : r.candidates()) {
                String name = "sampled_w" + w + "_" + k++;
                PrimFunc f;
                try {
                    f = ScheduleLowerer.forTarget(TARGET).lower(task, c.schedule());
                } catch (RuntimeException e) {
                    failures.add(name + " does not lower: " + e.getMessage() + "\n"
                            + c.schedule().toJavaSource());
                    continue;
                }
                f = new PrimFunc(name, f.params(), f.body());
                String diff = GpuTesting.compareWithDefault(dag, f, 11 + k, 1e-4);
                if (diff != null) failures.add(name + ": " + diff);
                modules.add(CudaCodegen.generate(f));
            }
            w++;
        }
        assertThat(failures).isEmpty();
        GpuTesting.assumeNvcc();
        String ptx = String.join("\n", GpuTesting.compileWithNvcc(modules));
        assertThat(ptx.lines().filter(l -> l.startsWith(".visible .entry")).count())
                .isEqualTo(modules.stream().mapToLong(m -> m.launches().size()).sum());
    }
}
