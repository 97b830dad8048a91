package dev.kiln.autoschedule.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.evolution.EvolutionOptions;
import dev.kiln.autoschedule.evolution.EvolutionarySearchPolicy;
import dev.kiln.autoschedule.model.RandomCostModel;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.te.ComputeDAG;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The seeded search explores exactly what it explored before the rule lists moved into one
 * place per target kind: the sketches, a random policy's batch and an evolutionary policy's batch
 * (its mutations drawn by their weights, guided by a {@link RandomCostModel}), for a CPU and a
 * CUDA task, hash to the fingerprints recorded with main's code at bd5c2d8 (SHA-256 of the
 * programs' printed states, one per line, in order). A deliberate change of the space updates
 * them in the same commit: the CPU random and evolutionary fingerprints were re-recorded when
 * register tiles with a tail (drawn for a quarter of register tiles) and {@code MutateRegisterTile}
 * (weight 0.10 of tile size's 0.90) joined Kiln's CPU space, and again when K-blocking joined it
 * ({@code InitKBlocking}, half of the stages where it matters, and {@code MutateKBlocking}, weight 0.05 of
 * tile size's 0.80), and again when reduction blocks of 128-384 joined it (drawn for half the stages with a
 * reduction of 256 or more, K-blocked nine times in ten, and {@code MutateReductionTile}, weight 0.05 of tile
 * size's 0.75; the matmul 64 random batch, whose reduction is small, is unchanged), and again, all four, when
 * {@code InitVectorization} began to vectorise the long contiguous rows of untiled stages (the packed copy of B,
 * the conv's padding); the sketches and the GPU search are still those of bd5c2d8.
 */
class SearchFingerprintTest {
    static final HardwareParams H200 = HardwareParams.cuda(48 * 1024, Integer.MAX_VALUE, 1024, 8, 32);

    static SearchTask cpuTask(ComputeDAG dag) {
        return Workloads.task(dag);
    }

    static SearchTask gpuTask(ComputeDAG dag) {
        return SearchTask.of(
                dag, "cuda -arch=sm_90 -max-threads-per-block=1024 -shared-memory-per-block=49152 -warp-size=32", H200);
    }

    static String fingerprint(List<String> keys) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256")
                    .digest(String.join("\n", keys).getBytes(StandardCharsets.UTF_8));
            return keys.size() + ":" + HexFormat.of().formatHex(h, 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String sketches(List<Sketch> sketches) {
        return fingerprint(sketches.stream().map(s -> s.steps().toString()).toList());
    }

    static String random(SearchTask task) {
        return fingerprint(RandomSearchPolicy.forTask(task, 11).nextBatch(12, Set.of()).stream()
                .map(Candidate::key)
                .toList());
    }

    static String evolution(SearchTask task, List<Sketch> sketches) {
        EvolutionOptions o = EvolutionOptions.defaults().withPopulation(48).withThreads(1);
        try (EvolutionarySearchPolicy p = new EvolutionarySearchPolicy(task, sketches, new RandomCostModel(5), o, 7)) {
            List<String> keys =
                    p.nextBatch(10, Set.of()).stream().map(Candidate::key).toList();
            return fingerprint(keys) + " "
                    + p.stats().validByRule.entrySet().stream()
                            .sorted(java.util.Map.Entry.comparingByKey())
                            .toList();
        }
    }

    @Test
    void cpuSearchIsUnchanged() {
        SearchTask mm = cpuTask(Workloads.matmul(64, 64, 64));
        SearchTask conv = cpuTask(Workloads.conv2dNhwcRelu(1, 14, 14, 32, 32, 3));
        List<Sketch> mmSketches = TargetRules.cpu().sketches(mm);
        List<Sketch> convSketches = TargetRules.cpu().sketches(conv);
        org.assertj.core.api.SoftAssertions.assertSoftly(t -> {
            t.assertThat(sketches(mmSketches)).isEqualTo("6:28bb6082ca0ed1119451210f");
            t.assertThat(sketches(convSketches)).isEqualTo("6:aa7c439ea3b86d686e09e34a");
            t.assertThat(random(mm)).isEqualTo("12:9bfbbb9e383fe0ae5b46450f");
            t.assertThat(random(conv)).isEqualTo("12:1cca018989d9ffbbbdaa2a3f");
            t.assertThat(evolution(mm, mmSketches))
                    .isEqualTo("10:e020daf1bfd28444c7829352 "
                            + "[MutateAutoUnroll=1, MutateComputeLocation=2, MutateParallel=1, MutateRegisterTile=8, "
                            + "MutateTileSize=75]");
            t.assertThat(evolution(conv, convSketches))
                    .isEqualTo("10:3f7eaaf250be747fc7f8cc2b "
                            + "[MutateAutoUnroll=1, MutateComputeLocation=2, MutateKBlocking=3, MutateParallel=1, "
                            + "MutateReductionTile=5, MutateRegisterTile=9, MutateTileSize=69]");
        });
    }

    @Test
    void gpuSearchIsUnchanged() {
        SearchTask mm = gpuTask(Workloads.matmul(64, 64, 64));
        List<Sketch> mmSketches = TargetRules.cuda().sketches(mm);
        assertThat(sketches(mmSketches)).isEqualTo("1:2b566b62dd943132198fba96");
        assertThat(random(mm)).isEqualTo("12:893ec407b819dba090f2d301");
        assertThat(evolution(mm, mmSketches))
                .isEqualTo("10:29b7a85346f83af20480dc4e [MutateAutoUnroll=11, MutateTileSize=86]");
    }
}
