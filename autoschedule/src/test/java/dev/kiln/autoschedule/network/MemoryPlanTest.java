package dev.kiln.autoschedule.network;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.graph.Graph;
import dev.kiln.graph.fuse.Partition;
import dev.kiln.models.Models;
import dev.kiln.onnx.OnnxImporter;
import dev.kiln.onnx.OnnxZoo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The memory plan never gives two values that are alive at the same time overlapping bytes. */
class MemoryPlanTest {

    static void assertNoOverlap(Graph g) {
        Partition p = Network.partition(g);
        MemoryPlan plan = MemoryPlan.plan(p);
        List<String> vs = new ArrayList<>(plan.offsets().keySet());
        vs.removeAll(plan.views());
        assertThat(vs).isNotEmpty();
        for (int i = 0; i < vs.size(); i++) {
            for (int j = i + 1; j < vs.size(); j++) {
                String a = vs.get(i), b = vs.get(j);
                long[] ia = plan.intervals().get(a), ib = plan.intervals().get(b);
                boolean live = ia[0] <= ib[1] && ib[0] <= ia[1];
                long oa = plan.offsets().get(a), ob = plan.offsets().get(b);
                boolean shared = oa < ob + p.graph().value(b).bytes()
                        && ob < oa + p.graph().value(a).bytes();
                assertThat(live && shared)
                        .as(
                                "%s @%d %s and %s @%d %s",
                                a, oa, java.util.Arrays.toString(ia), b, ob, java.util.Arrays.toString(ib))
                        .isFalse();
            }
        }
        assertThat(plan.totalBytes()).isLessThanOrEqualTo(plan.unplannedBytes(p.graph()));
    }

    @Test
    void bertWithMaskSplitsFreeBlocksCorrectly() {
        // small blocks carved from larger ones, then best fit: once gave a block that ran into a live value
        assertNoOverlap(OnnxImporter.fromModel(
                OnnxZoo.bert("bert", 100, 16, 8, 64, 4, 128, 2, 20, 7).build(), Map.of("batch", 2L)));
    }

    @Test
    void networksOfTheModelLibrary() {
        assertNoOverlap(Models.bertLayer(16, 32, 4, 64, 2));
        assertNoOverlap(Models.mobilenetV2(1, 32, 1));
    }
}
