package dev.kiln.autoschedule.evolution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.SoftAssertions.assertSoftly;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.annotate.FactorizationMemo;
import dev.kiln.autoschedule.annotate.ReductionTileSizes;
import dev.kiln.autoschedule.annotate.RegisterTileSizes;
import dev.kiln.autoschedule.mutation.MutateReductionTile;
import dev.kiln.autoschedule.mutation.MutateRegisterTile;
import dev.kiln.autoschedule.mutation.MutationRule;
import dev.kiln.schedule.SplitStep;
import dev.kiln.te.ComputeDAG;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Pins what the tile-size draws of Kiln's register tiles and reduction blocks give for fixed seeds: the
 * {@code withInnermost} draws of {@link RegisterTileSizes} and {@link ReductionTileSizes}, the initial samples
 * that use them, and the children of {@link MutateRegisterTile} and {@link MutateReductionTile}. A characterisation
 * test: the expected values were taken from the code before the two pairs of classes came to share their common
 * parts, so a refactoring that changes which sizes a seed draws (and with them every tuning run's reproducibility
 * from its seed) fails here. The initial samples were re-recorded when {@code InitVectorization} began to vectorise
 * long contiguous rows of untiled stages (the packed copies of these tasks), which changes their annotations and the
 * draws after them; the tile draws and the mutation children were not affected.
 */
class TileDrawPinTest {

    @Test
    void withInnermostDrawsStayTheSame() {
        FactorizationMemo memo = new FactorizationMemo();
        StringBuilder sb = new StringBuilder();
        for (long seed = 1; seed <= 4; seed++) {
            SplittableRandom rng = new SplittableRandom(seed);
            sb.append(ReductionTileSizes.withInnermost(memo, 1024, 4, 128, rng))
                    .append(ReductionTileSizes.withInnermost(memo, 96, 3, 8, rng))
                    .append(RegisterTileSizes.withInnermost(memo, 56, 4, 6, rng))
                    .append(RegisterTileSizes.withInnermost(memo, 1024, 3, 32, rng))
                    .append(';');
        }
        assertThat(sb.toString()).isEqualTo(PINNED_WITH_INNERMOST);
    }

    @Test
    void initialSamplesStayTheSame() {
        assertSoftly(s -> {
            s.assertThat(samples(Workloads.matmul(64, 48, 1024), 3)).isEqualTo(PINNED_SAMPLES_MATMUL);
            s.assertThat(samples(Workloads.conv2dNhwcRelu(1, 14, 14, 64, 32, 3), 4))
                    .isEqualTo(PINNED_SAMPLES_CONV);
        });
    }

    @Test
    void mutationChildrenStayTheSame() {
        ComputeDAG matmul = Workloads.matmul(64, 48, 1024);
        ComputeDAG conv = Workloads.conv2dNhwcRelu(1, 14, 14, 64, 32, 3);
        assertSoftly(s -> {
            s.assertThat(children(matmul, new MutateRegisterTile())).isEqualTo(PINNED_REGISTER_MATMUL);
            s.assertThat(children(conv, new MutateRegisterTile())).isEqualTo(PINNED_REGISTER_CONV);
            s.assertThat(children(matmul, new MutateReductionTile())).isEqualTo(PINNED_REDUCTION_MATMUL);
            s.assertThat(children(conv, new MutateReductionTile())).isEqualTo(PINNED_REDUCTION_CONV);
        });
    }

    /** The hash of 16 sampled programs' keys (seed {@code seed}): pins every split length they drew. */
    private static int samples(ComputeDAG dag, long seed) {
        StringBuilder sb = new StringBuilder();
        for (Candidate c : MutationRulesTest.parents(Workloads.task(dag), 16, seed))
            sb.append(c.key()).append('\n');
        return sb.toString().hashCode();
    }

    /** For 12 sampled parents, the child of each (rule seed = parent index): the changed splits' lengths. */
    private static String children(ComputeDAG dag, MutationRule rule) {
        SearchTask task = Workloads.task(dag);
        List<Candidate> parents = MutationRulesTest.parents(task, 12, 5);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < parents.size(); i++) {
            Candidate p = parents.get(i), c = rule.apply(task, p, new SplittableRandom(i));
            if (c == null) {
                sb.append("-;");
                continue;
            }
            for (int at : MutationRulesTest.diff(p, c))
                sb.append(at)
                        .append('=')
                        .append(((SplitStep) c.schedule().steps().get(at)).lengths());
            sb.append(';');
        }
        return sb.toString();
    }

    private static final String PINNED_WITH_INNERMOST = "[1, 2, 4, 128][3, 4, 8][1, 1, 5, 6][16, 2, 32];"
            + "[1, 1, 1, 128][2, 1, 8][1, 2, 5, 6][1, 1, 32];"
            + "[4, 1, 2, 128][2, 6, 8][1, 1, 1, 6][32, 1, 32];[8, 1, 1, 128][4, 3, 8][5, 2, 1, 6][1, 2, 32];";
    private static final int PINNED_SAMPLES_MATMUL = 529196160;
    private static final int PINNED_SAMPLES_CONV = -1895619498;
    private static final String PINNED_REGISTER_MATMUL = "1=[1, 3, 16];1=[1, 1, 8]2=[1, 1, 8];1=[1, 4, 4]2=[3, 1, 16];"
            + "0=[2, 4, 4]1=[3, 1, 16];0=[32, 1, 2]1=[1, 3, 16];0=[2, 8, 1]1=[1, 1, 48];0=[1, 8, 8]1=[3, 1, 8];"
            + "1=[13, 1, 5]2=[3, 1, 16];1=[2, 16, 2]2=[3, 1, 16];0=[4, 1, 2]1=[2, 1, 24];1=[2, 8, 4]2=[1, 2, 24];"
            + "1=[1, 32, 2]2=[1, 3, 16];";
    private static final String PINNED_REGISTER_CONV = "1=[1, 2, 1]2=[1, 1, 1]3=[1, 1, 32];1=[7, 1, 2]2=[1, 1, 2];"
            + "1=[7, 1, 2]3=[1, 1, 8];2=[1, 1, 1]3=[1, 1, 32];1=[1, 1, 2]2=[1, 2, 7]3=[1, 2, 8];"
            + "1=[1, 2, 7]2=[1, 7, 2]3=[1, 4, 8];1=[1, 2, 7]3=[1, 2, 8];1=[2, 1, 13]2=[7, 1, 1]3=[1, 2, 8];"
            + "1=[1, 1, 1]2=[1, 1, 14]3=[4, 1, 8];2=[2, 1, 7]3=[2, 1, 8];2=[1, 1, 14]3=[2, 2, 8];"
            + "2=[1, 2, 7]3=[1, 4, 8];";
    private static final String PINNED_REDUCTION_MATMUL =
            "2=[256];3=[256];3=[256];2=[128];2=[256];2=[256];2=[256];3=[256];3=[256];2=[256];3=[256];3=[128];";
    private static final String PINNED_REDUCTION_CONV =
            "5=[1]6=[64];6=[64];5=[1]6=[64];4=[3]5=[1];6=[32];4=[3]5=[3]6=[32];"
                    + "4=[3]6=[32];4=[3]5=[1];6=[64];4=[3]6=[32];6=[64];5=[1]6=[64];";
}
