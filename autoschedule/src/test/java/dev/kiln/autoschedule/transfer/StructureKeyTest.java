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

    /**
     * Transfer seeds are found by these keys in tuning logs on disk, so they must not change. The expected strings
     * were computed once by the code before {@code StructureKey} delegated to dsl's {@code CanonicalText} (main at
     * 1c2434f), not by this code; the target is fixed so that the keys do not depend on this machine.
     */
    @Test
    void keysAreTheOnesOfTheCodeBeforeTheSharedPrinter() {
        List<ComputeDAG> dags = List.of(
                Workloads.matmul(64, 48, 32),
                Workloads.conv2dBnRelu(1, 14, 14, 8, 16, 3, 2, 1),
                Workloads.softmaxNm(4, 100),
                Workloads.layerNorm(8, 64));
        List<List<String>> expected = List.of(
                List.of(
                        "kiln-d94fa913847ad7246f48f5f78fe18e23",
                        "struct-5fcde294c94de10a91c00ac07364dcaa",
                        "struct-c188c31fb1108da40e4e3206e45c0b3d"),
                List.of(
                        "kiln-ad8b51bfa873942d0a67481223c1f6d0",
                        "struct-ba5c45d21734c8cc5f33c8f84ee92042",
                        "struct-aefd236694e3e4702fe4b138862b50ed"),
                List.of(
                        "kiln-2f4141d5fdf4bd1152e458b35285c848",
                        "struct-d2b9301f952e148808221a78dd226e45",
                        "struct-7be15b6926dab7ac126e03b3dc8aa619"),
                List.of(
                        "kiln-84e17e2ff6516f113c35b8a3e661febc",
                        "struct-dc62febd3e568f9cfcf865e5f6d35f63",
                        "struct-052af050308e80221b2a7e25fcca9c7f"));
        for (int i = 0; i < dags.size(); i++) {
            SearchTask task = SearchTask.of(dags.get(i), TARGET);
            assertThat(List.of(
                            task.workloadKey(),
                            task.structureKey(),
                            task.withLayoutFree(List.of(0)).structureKey()))
                    .as("DAG %d", i)
                    .isEqualTo(expected.get(i));
        }
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
