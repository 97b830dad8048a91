package dev.kiln.autoschedule.annotate;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.ir.KilnException;
import dev.kiln.nn.Conv;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Weight-stationary tile draws: which stages and splits qualify, and what the sampler then draws. */
class WeightStationaryTilesTest {
    private static final HardwareParams AVX512 = HardwareParams.cpu(2, 64, 64);
    private static final FactorizationMemo MEMO = new FactorizationMemo();

    /** ResNet-50's layer-4 3x3 conv (7x7, 512 -> 512: 9.4 MB of weights), weights layout-free as a network has them. */
    private static SearchTask conv(int channels, boolean layoutFree) {
        var data = Te.placeholder("data", FLOAT32, 1, 9, 9, channels);
        var weight = Te.placeholder("weight", FLOAT32, 3, 3, channels, channels);
        SearchTask t = SearchTask.cpu(ComputeDAG.of(Conv.conv2dNhwc(data, weight, 1, 0)), AVX512);
        return layoutFree ? t.withLayoutFree(List.of(1)) : t;
    }

    /** The axis names of the splits {@code WeightStationaryTiles} picks in the first sketch with a tiled group. */
    private static List<String> pickedAxes(SearchTask task) {
        for (Sketch sk : TargetRules.cpu().sketches(task)) {
            for (RegisterTileSizes.Group g : RegisterTileSizes.groups(task.dag(), sk)) {
                List<Integer> picked =
                        WeightStationaryTiles.splits(task, sk.state().steps(), g);
                List<String> names = new ArrayList<>();
                LoopState s = LoopState.initial(task.dag());
                List<Step> steps = sk.state().steps();
                for (int i = 0; i < steps.size(); i++) {
                    if (picked.contains(i) && steps.get(i) instanceof SplitStep sp)
                        names.add(s.stage(sp.stageId()).iter(sp.iterId()).name());
                    s = s.apply(steps.get(i));
                }
                return names;
            }
        }
        throw new AssertionError("no tiled stage");
    }

    @Test
    void theRowsAndColumnsOfAConvWithLargeConstantWeightsQualify() {
        // the weights are read at [rh, rw, rc, l]: the batch (extent 1) and the output channels are left out
        assertThat(pickedAxes(conv(512, true))).containsExactly("j", "k");
        // weights that fit in a core's cache (3x3x128x128 = 576 KiB), or weights that are not constant: none
        assertThat(pickedAxes(conv(128, true))).isEmpty();
        assertThat(pickedAxes(conv(512, false))).isEmpty();
    }

    @Test
    void aWeightStationaryDrawLeavesTheRowsWholeInsideTheParallelTiles() {
        SearchTask task = conv(512, true);
        Sketch sk = TargetRules.cpu().sketches(task).getFirst();
        RegisterTileSizes.Group g = RegisterTileSizes.groups(task.dag(), sk).getFirst();
        List<Integer> picked = WeightStationaryTiles.splits(task, sk.state().steps(), g);
        assertThat(picked).hasSize(2);
        InitFillTileSize always = new InitFillTileSize(MEMO, 0.5, 0.25, 0.5, 1.0);
        InitFillTileSize never = new InitFillTileSize(MEMO, 0.5, 0.25, 0.5, 0.0);
        SplittableRandom rng = new SplittableRandom(5);
        int splitRows = 0;
        for (int d = 0; d < 200; d++) {
            List<Step> a = always.fill(task, sk, rng), n = never.fill(task, sk, rng);
            for (int at : picked) {
                assertThat(outer((SplitStep) a.get(at))) // 7 rows, 7 columns: all below level 0
                        .as("%s", a.get(at))
                        .isEqualTo(1);
                if (outer((SplitStep) n.get(at)) > 1) splitRows++;
            }
            // the output channels are drawn as before: level 0 may split them
            new dev.kiln.schedule.Schedule(task.dag(), a).replay();
        }
        // Ansor's uniform draw over 7 (a prime: 1 or 7 at one level) leaves the rows split at level 0 in about a
        // quarter of the draws, more with register tiles
        assertThat(splitRows).isGreaterThan(40);
        // the default draws it for a quarter of such stages: about a quarter of the draws that would split the rows
        int draws = 2000;
        int byDefault = wholeDraws(new InitFillTileSize(MEMO), task, sk, picked, draws);
        int withoutIt = wholeDraws(never, task, sk, picked, draws);
        int wouldSplit = draws - withoutIt;
        assertThat(byDefault - withoutIt).isBetween(wouldSplit / 4 - wouldSplit / 10, wouldSplit / 4 + wouldSplit / 10);
    }

    /** How many of {@code draws} leave every split of {@code picked} whole below level 0. */
    private static int wholeDraws(InitFillTileSize fill, SearchTask task, Sketch sk, List<Integer> picked, int draws) {
        SplittableRandom rng = new SplittableRandom(17);
        int whole = 0;
        for (int d = 0; d < draws; d++) {
            List<Step> s = fill.fill(task, sk, rng);
            if (picked.stream().allMatch(at -> outer((SplitStep) s.get(at)) == 1)) whole++;
        }
        return whole;
    }

    @Test
    void probabilitiesOutsideTheUnitIntervalAreRefused() {
        assertThatThrownBy(() -> new InitFillTileSize(MEMO, 0.5, 0.25, 0.5, 1.5))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("weightStationaryProbability");
    }

    /** The level-0 factor: the blocks of the inner tiles that cover the extent (a tail tile covers it with a guard). */
    private static long outer(SplitStep sp) {
        long inner = 1;
        for (int l : sp.lengths()) inner *= l;
        return (sp.extent() + inner - 1) / inner;
    }
}
