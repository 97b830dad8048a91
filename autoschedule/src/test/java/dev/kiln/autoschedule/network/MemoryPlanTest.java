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
        for (MemoryPlan.Reuse reuse : MemoryPlan.Reuse.values()) assertNoOverlap(g, reuse);
    }

    static void assertNoOverlap(Graph g, MemoryPlan.Reuse reuse) {
        Partition p = Network.partition(g);
        MemoryPlan plan = MemoryPlan.plan(p, reuse);
        assertThat(plan.reuse()).isEqualTo(reuse);
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
                                "%s: %s @%d %s and %s @%d %s",
                                reuse, a, oa, java.util.Arrays.toString(ia), b, ob, java.util.Arrays.toString(ib))
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

    @Test
    void recentReuseWritesOutputsOverTheBytesReadLast() {
        Partition p = Network.partition(Models.mobilenetV2(1, 224, 1));
        MemoryPlan best = MemoryPlan.plan(p, MemoryPlan.Reuse.BEST_FIT);
        MemoryPlan recent = MemoryPlan.plan(p, MemoryPlan.Reuse.RECENT);
        assertThat(best.offsets().keySet()).isEqualTo(recent.offsets().keySet());
        int hotBest = hotOutputs(p, best), hotRecent = hotOutputs(p, recent);
        assertThat(hotRecent).as("outputs over bytes freed last").isGreaterThan(hotBest);
        assertThat(hotRecent).isGreaterThan(recent.offsets().size() / 2);
        assertThat(recent.totalBytes()).isLessThanOrEqualTo(recent.unplannedBytes(p.graph()) / 3);
    }

    /**
     * How many planned outputs start inside the bytes of a value whose last reader is the latest group
     * before the output's own among the values freed by then (the bytes read last, likely still in cache).
     */
    static int hotOutputs(Partition p, MemoryPlan plan) {
        Graph g = p.graph();
        int hot = 0;
        for (String v : plan.offsets().keySet()) {
            if (plan.views().contains(v)) continue;
            long def = plan.intervals().get(v)[0];
            long latest = -1;
            for (String u : plan.offsets().keySet()) {
                long end = plan.intervals().get(u)[1];
                if (!plan.views().contains(u) && end < def) latest = Math.max(latest, end);
            }
            long off = plan.offsets().get(v);
            for (String u : plan.offsets().keySet()) {
                if (plan.views().contains(u) || plan.intervals().get(u)[1] != latest) continue;
                long ou = plan.offsets().get(u);
                if (off >= ou && off < ou + g.value(u).bytes()) {
                    hot++;
                    break;
                }
            }
        }
        return hot;
    }
}
