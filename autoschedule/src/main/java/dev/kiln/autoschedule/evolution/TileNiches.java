package dev.kiln.autoschedule.evolution;

import dev.kiln.autoschedule.annotate.RegisterTileSizes;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeDAG;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Register-tile niches in a measured batch (Kiln; Ansor picks the best predicted programs whatever they share). A
 * cost model that favours one register tile shape fills the whole batch with its variants, the evolution then seeds
 * from them alone, and the search never measures the other shapes: tuning the int8 GEMM 1024 with 100 trials, two of
 * three seeds measured only 16 x 1 tiles after their first round (75 of 111 programs) and ended at 0.80x oneDNN,
 * while the seed that measured 4 x 4 tiles ended at 0.97x. {@link #order} moves the programs past a cap of one shape
 * behind the others, so the batch's model picks hold several shapes, each at its best predicted programs.
 */
public final class TileNiches {
    private TileNiches() {}

    /**
     * The register tiles of a CPU program: for every register-tile group of the program's stages
     * ({@link RegisterTileSizes#groups(ComputeDAG, List)}), its stage and the innermost tile of each split, e.g.
     * {@code "matmul:16x1"}; empty for a program without one (no reduction to tile).
     */
    public static String signature(ComputeDAG dag, List<Step> steps) {
        StringBuilder sb = new StringBuilder();
        for (RegisterTileSizes.Group g : RegisterTileSizes.groups(dag, steps)) {
            if (!sb.isEmpty()) sb.append(';');
            sb.append(g.stage()).append(':');
            for (int k = 0; k < g.splitSteps().size(); k++) {
                if (k > 0) sb.append('x');
                sb.append(
                        ((SplitStep) steps.get(g.splitSteps().get(k))).lengths().getLast());
            }
        }
        return sb.toString();
    }

    /**
     * {@code ranked} (best first, no duplicates) reordered so that its first {@code take} entries hold at most
     * {@code cap} of any one niche ({@code niche} of an entry) as long as other niches have entries left: walking
     * the ranking, an entry past its niche's cap waits, and the waiting entries follow the picks in their order. A
     * ranking with a single niche, or a cap of {@code take} or more, is returned as it is.
     */
    public static <T> List<T> order(List<T> ranked, Function<T, String> niche, int take, int cap) {
        if (cap < 1) throw new IllegalArgumentException("cap must be at least 1, not " + cap);
        if (cap >= take || ranked.size() <= cap) return ranked;
        List<T> picked = new ArrayList<>(), waiting = new ArrayList<>();
        Map<String, Integer> count = new HashMap<>();
        for (T t : ranked) {
            if (picked.size() >= take) {
                waiting.add(t);
                continue;
            }
            int c = count.merge(niche.apply(t), 1, Integer::sum);
            (c <= cap ? picked : waiting).add(t);
        }
        picked.addAll(waiting);
        return picked;
    }

    /** The cap of one niche in {@code take} picks at share {@code share}: at least one, at most {@code take}. */
    public static int cap(int take, double share) {
        return Math.max(1, Math.min(take, (int) Math.ceil(share * take)));
    }
}
