package dev.kiln.autoschedule.transfer;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTask;
import dev.kiln.models.Models;
import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.Linalg;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The structural key: similar tasks (the same fused computation of other shapes) share it, others do not. */
class StructureKeyTest {
    static final CpuTarget TARGET = new CpuTarget("x86_64-unknown-linux-gnu", "x86-64", "", 4, 256, 64);

    static ComputeDAG convRelu(int h, int c, int k, int kernel, int stride) {
        Tensor x = Te.placeholder("x", FLOAT32, 1, h, h, c);
        Tensor w = Te.placeholder("w", FLOAT32, kernel, kernel, c, k);
        Tensor y = Conv.conv2dNhwc(x, w, stride, kernel / 2);
        return ComputeDAG.of(Activation.relu(y));
    }

    @Test
    void convolutionsOfOtherShapesShareTheKeyADenseDoesNot() {
        SearchTask a = Workloads.task(convRelu(14, 8, 16, 3, 1));
        SearchTask b = Workloads.task(convRelu(28, 4, 8, 3, 1));
        assertThat(a.workloadKey()).isNotEqualTo(b.workloadKey());
        assertThat(a.structureKey()).isEqualTo(b.structureKey()).startsWith("struct-");
        Tensor x = Te.placeholder("x", FLOAT32, 8, 16);
        Tensor w = Te.placeholder("w", FLOAT32, 16, 16);
        SearchTask dense = Workloads.task(ComputeDAG.of(Activation.relu(Linalg.dense(x, w))));
        assertThat(dense.structureKey()).isNotEqualTo(a.structureKey());
        // without the relu it is another fused computation
        Tensor x2 = Te.placeholder("x", FLOAT32, 1, 14, 14, 8);
        Tensor w2 = Te.placeholder("w", FLOAT32, 3, 3, 8, 16);
        SearchTask plain = Workloads.task(ComputeDAG.of(Conv.conv2dNhwc(x2, w2, 1, 1)));
        assertThat(plain.structureKey()).isNotEqualTo(a.structureKey());
        // the layout-free arguments are part of it
        assertThat(a.withLayoutFree(List.of(1)).structureKey())
                .isNotEqualTo(a.structureKey())
                .isEqualTo(b.withLayoutFree(List.of(1)).structureKey());
    }

    @Test
    void theSmallResnetHasGroupsOfSimilarConvolutionTasks() {
        List<NetworkTask> tasks = Network.tasks(Models.resnet18(1, 32, 4, 10, 5), TARGET);
        Map<String, List<NetworkTask>> groups = tasks.stream()
                .collect(Collectors.groupingBy(t -> t.task().structureKey(), LinkedHashMap::new, Collectors.toList()));
        groups.values()
                .forEach(g -> System.out.println(g.size() + " x "
                        + g.stream().map(NetworkTask::description).toList()));
        assertThat(groups.size()).isLessThan(tasks.size());
        // a group with several conv tasks of different shapes
        assertThat(groups.values())
                .anySatisfy(g -> assertThat(g).hasSizeGreaterThan(1).allSatisfy(t -> assertThat(t.description())
                        .startsWith("conv2d")));
        for (List<NetworkTask> g : groups.values()) {
            // the same op kinds in a group; never a conv with a dense
            assertThat(g.stream().map(t -> t.tag()).distinct().count()).isOne();
        }
    }
}
