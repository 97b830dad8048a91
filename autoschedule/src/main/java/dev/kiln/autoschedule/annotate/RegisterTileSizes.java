package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeDAG;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.IntPredicate;

/**
 * Register tiles sized to the vector registers (Kiln's addition to Ansor's tile-size sampling).
 * In a multi-level-tiled reduction the innermost spatial tiles form the register tile: the
 * innermost tile of the last spatial loop is the vectorised one ({@code v} elements, {@code v / L}
 * vectors of {@code L} lanes), the innermost tiles of the other spatial loops multiply into the
 * rows ({@code r}). A BLAS micro-kernel keeps {@code r * v / L} accumulators in registers and
 * needs {@code v / L} more for the loaded vectors and one for the broadcast, so a tile fits when
 * {@code r * v/L + v/L + 1 <= R} ({@link HardwareParams#vectorRegisters()}), and hides the FMA
 * latency when it has at least {@code R / 4} accumulators. Uniform sampling of exact
 * factorisations rarely lands there (GEMM 1024 on AVX-512: about 7% of the draws); this class
 * finds the stages ({@link #groups}) and draws innermost tiles uniformly among the fitting ones
 * ({@link #innermost}). Exact divisors only, as everywhere in the sampling.
 */
public final class RegisterTileSizes {
    private RegisterTileSizes() {}

    /**
     * The undecided spatial splits of one multi-level-tiled reduction stage, in loop order (the
     * last is the vector axis), with the size of its elements.
     */
    public record Group(String stage, List<Integer> splitSteps, int elementBytes) {
        public Group {
            splitSteps = List.copyOf(splitSteps);
            if (splitSteps.isEmpty()) throw new KilnException("a register-tile group of '" + stage + "' needs a split");
        }
    }

    /**
     * The register-tile groups of a sketch: for every stage with a reduction loop, its undecided
     * splits of spatial loops (with two or more tile sizes, as multi-level tiling makes them).
     * The sketch's state history is replayed to read each loop's kind before its split.
     */
    public static List<Group> groups(ComputeDAG dag, Sketch sketch) {
        List<Step> undecided = sketch.steps();
        return groups(dag, sketch.state().steps(),
                i -> undecided.get(i) instanceof SplitStep sp && !sp.isConcrete());
    }

    /**
     * The register-tile groups of a program's steps (all decided): for every stage with a
     * reduction loop, its splits of spatial loops with two or more tile sizes that tile the loop
     * exactly (the register tile mutation's groups, {@code MutateRegisterTile}).
     */
    public static List<Group> groups(ComputeDAG dag, List<Step> steps) {
        return groups(dag, steps, i -> steps.get(i) instanceof SplitStep sp && sp.isConcrete() && sp.innerToOuter()
                && sp.extent() % sp.lengths().stream().mapToLong(Integer::longValue).reduce(1, (a, b) -> a * b) == 0);
    }

    private static List<Group> groups(ComputeDAG dag, List<Step> history, IntPredicate eligible) {
        Map<String, List<Integer>> splits = new LinkedHashMap<>();
        Map<String, Integer> bytes = new LinkedHashMap<>();
        LoopState t = LoopState.initial(dag);
        for (int i = 0; i < history.size(); i++) {
            Step step = history.get(i);
            if (step instanceof SplitStep sp && sp.lengths().size() >= 2 && sp.extent() != null && eligible.test(i)) {
                Stage st = t.stage(sp.stageId());
                if (!st.isPlaceholder() && StagePredicates.hasReduceIter(st)
                        && st.iter(sp.iterId()).kind() == IterKind.SPATIAL) {
                    splits.computeIfAbsent(st.name(), k -> new ArrayList<>()).add(i);
                    bytes.put(st.name(), st.computeOp().outputs().getFirst().dtype().bytes());
                }
            }
            t = t.apply(step);
        }
        List<Group> out = new ArrayList<>();
        splits.forEach((name, steps) -> out.add(new Group(name, steps, bytes.get(name))));
        return List.copyOf(out);
    }

    /** Whether {@code rows} rows of {@code vectors} vectors fit the registers and hide the latency. */
    public static boolean fits(HardwareParams hw, long rows, long vectors) {
        int regs = hw.vectorRegisters();
        long acc = rows * vectors;
        return vectors >= 1 && acc + vectors + 1 <= regs && acc >= regs / 4;
    }

    /**
     * Innermost tile sizes for the group's splits (extents in {@code extents}, the group's
     * order), drawn uniformly among the combinations that {@link #fits}, each at most
     * {@link HardwareParams#maxInnermostSplitFactor()} and dividing its extent; null when there is
     * none (for example a vector axis whose extent is not a multiple of the lanes).
     */
    public static int[] innermost(HardwareParams hw, int elementBytes, List<Long> extents, FactorizationMemo memo,
                                  SplittableRandom rng) {
        List<int[]> all = candidates(hw, elementBytes, extents, memo);
        return all.isEmpty() ? null : all.get(rng.nextInt(all.size())).clone();
    }

    /** Every fitting combination of innermost tiles, in a fixed order. */
    public static List<int[]> candidates(HardwareParams hw, int elementBytes, List<Long> extents, FactorizationMemo memo) {
        int n = extents.size();
        int lanes = hw.lanes(elementBytes);
        int maxInner = hw.maxInnermostSplitFactor();
        List<int[]> out = new ArrayList<>();
        for (int v : memo.divisors(extents.get(n - 1))) {
            if (v > maxInner) break;
            if (v % lanes != 0) continue;
            int vectors = v / lanes;
            int[] tile = new int[n];
            tile[n - 1] = v;
            rows(hw, extents, memo, tile, 0, 1, vectors, out);
        }
        return out;
    }

    private static void rows(HardwareParams hw, List<Long> extents, FactorizationMemo memo, int[] tile, int axis,
                             long rows, int vectors, List<int[]> out) {
        int regs = hw.vectorRegisters();
        if (axis == tile.length - 1) {
            if (fits(hw, rows, vectors)) out.add(tile.clone());
            return;
        }
        for (int d : memo.divisors(extents.get(axis))) {
            if (d > hw.maxInnermostSplitFactor() || rows * d * vectors + vectors + 1 > regs) break;
            tile[axis] = d;
            rows(hw, extents, memo, tile, axis + 1, rows * d, vectors, out);
        }
        tile[axis] = 0;
    }
}
