package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.AmxTensorIntrinsics;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import dev.kiln.schedule.Step;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
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
 * ({@link #innermost}). Exact divisors by default, as everywhere in Ansor's sampling; with a
 * given probability a tile with a tail ({@link #tailCandidates}: one row tile that does not divide
 * its loop, as 6 x 64 on a 56-wide image) whose split covers the loop by
 * {@link #withInnermost}.
 */
public final class RegisterTileSizes {
    private RegisterTileSizes() {}

    /**
     * Whether a vector of {@code lanes} elements may be tiled in halves: when half of it is itself a vector of 8
     * elements or more (a ymm of float32 on AVX-512; not an xmm on AVX2).
     */
    static boolean halfVectors(int lanes) {
        return lanes >= 16 && lanes % 2 == 0;
    }

    /**
     * The undecided spatial splits of one multi-level-tiled reduction stage, in loop order (the
     * last is the vector axis), with the size of its elements (for a tensorized stage, whose vector
     * axis is the outer part of the intrinsic's, the size of the intrinsic's accumulator vector: one
     * element is one register). A tensorized stage takes tiles with a row tail too ({@link
     * #tailCandidates}: 6 x 4, 12 x 2, 14 x 2 accumulators over 1024 rows): the row loops lie outside
     * the intrinsic's nest, and the lowering guards the tail there, so the nest stays exact.
     */
    public record Group(String stage, List<Integer> splitSteps, int elementBytes, boolean tensorized, DType dtype) {
        public Group {
            splitSteps = List.copyOf(splitSteps);
            if (splitSteps.isEmpty()) throw new KilnException("a register-tile group of '" + stage + "' needs a split");
        }

        /**
         * The bytes one element takes in a vector register on {@code target}: a bfloat16 stage computes in float32
         * registers, and so does a float16 one unless the target has AVX-512 FP16 (32 half lanes a zmm); otherwise
         * {@link #elementBytes}. A 32-wide float16 row is two zmm accumulators without FP16, one with it.
         */
        public int registerBytes(Target target) {
            if (tensorized) return elementBytes;
            boolean inFloat32 = dtype == DType.BFLOAT16
                    || dtype == DType.FLOAT16 && !(target instanceof CpuTarget c && c.hasNativeFloat16());
            return inFloat32 ? 4 : elementBytes;
        }
    }

    /**
     * The register-tile groups of a sketch: for every stage with a reduction loop, its undecided
     * splits of spatial loops (with two or more tile sizes, as multi-level tiling makes them).
     * The sketch's state history is replayed to read each loop's kind before its split.
     */
    public static List<Group> groups(ComputeDAG dag, Sketch sketch) {
        return groups(dag, sketch.state().steps(), InnermostTiles.undecided(sketch));
    }

    /**
     * The register-tile groups of a program's steps (all decided): for every stage with a
     * reduction loop, its inner-to-outer splits of spatial loops with two or more tile sizes
     * (the register tile mutation's groups, {@code MutateRegisterTile}).
     */
    public static List<Group> groups(ComputeDAG dag, List<Step> steps) {
        return groups(dag, steps, InnermostTiles.decided(steps));
    }

    private static List<Group> groups(ComputeDAG dag, List<Step> history, IntPredicate eligible) {
        Map<String, List<Integer>> splits = new LinkedHashMap<>();
        Map<String, Integer> bytes = new LinkedHashMap<>();
        Map<String, DType> dtypes = new LinkedHashMap<>();
        LoopState t = LoopState.initial(dag);
        for (int i = 0; i < history.size(); i++) {
            Step step = history.get(i);
            if (step instanceof SplitStep sp && sp.lengths().size() >= 2 && sp.extent() != null && eligible.test(i)) {
                Stage st = t.stage(sp.stageId());
                if (!st.isPlaceholder()
                        && StagePredicates.hasReduceIter(st)
                        && st.iter(sp.iterId()).kind() == IterKind.SPATIAL) {
                    splits.computeIfAbsent(st.name(), k -> new ArrayList<>()).add(i);
                    DType dt = st.computeOp().outputs().getFirst().dtype();
                    bytes.put(st.name(), dt.bytes());
                    dtypes.put(st.name(), dt);
                }
            }
            t = t.apply(step);
        }
        List<Group> out = new ArrayList<>();
        for (var e : splits.entrySet()) {
            int b = bytes.get(e.getKey());
            Stage.Tensorized ts = t.stage(t.stageIndex(e.getKey())).tensorized();
            // an AMX tile's accumulator is a tile register, not zmm vectors: left to the uniform draw
            if (ts != null && AmxTensorIntrinsics.isAmx(ts.intrinsic())) continue;
            // a tensorized stage's vector axis is the intrinsic's outer part: each element is a
            // whole accumulator vector (16 int32 / float32), so it counts one vector, not one lane
            if (ts != null)
                b *= Math.toIntExact(
                        TensorIntrinsics.get(ts.intrinsic()).loopExtents().getFirst());
            out.add(new Group(e.getKey(), e.getValue(), b, ts != null, dtypes.get(e.getKey())));
        }
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
     * none (for example a vector axis shorter than half a vector). A vector axis whose extent is not a whole number
     * of vectors but of half vectors (24 float32 channels on AVX-512, MobileNet-V2's narrowest layers) takes
     * vector tiles of whole half vectors, a row of 24 being one zmm and one ymm register (Kiln; before, such a
     * stage fell back to Ansor's uniform draw and its 12-lane tiles).
     */
    public static int[] innermost(
            HardwareParams hw, int elementBytes, List<Long> extents, FactorizationMemo memo, SplittableRandom rng) {
        return innermost(hw, elementBytes, extents, memo, 0, rng);
    }

    /**
     * As {@link #innermost(HardwareParams, int, List, FactorizationMemo, SplittableRandom)}, but
     * with probability {@code tailProbability} the tile is drawn among those with a tail
     * ({@link #tailCandidates}) when there are any; only tails when no exact tile fits.
     */
    public static int[] innermost(
            HardwareParams hw,
            int elementBytes,
            List<Long> extents,
            FactorizationMemo memo,
            double tailProbability,
            SplittableRandom rng) {
        List<int[]> from = choose(
                candidates(hw, elementBytes, extents, memo),
                tailProbability == 0 ? List.of() : tailCandidates(hw, elementBytes, extents, memo),
                tailProbability,
                rng);
        return from.isEmpty() ? null : from.get(rng.nextInt(from.size())).clone();
    }

    /** The exact tiles, or with probability {@code p} the tails (whichever list is not empty when one is). */
    public static List<int[]> choose(List<int[]> exact, List<int[]> tails, double p, SplittableRandom rng) {
        if (p == 0 || tails.isEmpty()) return exact;
        if (exact.isEmpty()) return tails;
        return rng.nextDouble() < p ? tails : exact;
    }

    /** Every fitting combination of innermost tiles, each dividing its loop, in a fixed order. */
    public static List<int[]> candidates(
            HardwareParams hw, int elementBytes, List<Long> extents, FactorizationMemo memo) {
        return enumerate(hw, elementBytes, extents, memo, false);
    }

    /**
     * Every fitting combination of innermost tiles in which exactly one row tile (a tile of a
     * loop other than the vector one) does not divide its loop, in a fixed order: 6 x 64 on a
     * 56-wide image, 12 x 32 on a 28-wide one. The split leaves a tail (the last outer iteration
     * computes fewer rows); the lowering guards it and loop partitioning peels it off, so the
     * full tiles run without guards. The vector tile still divides its loop (a vector tail would
     * be masked or scalar).
     */
    public static List<int[]> tailCandidates(
            HardwareParams hw, int elementBytes, List<Long> extents, FactorizationMemo memo) {
        return enumerate(hw, elementBytes, extents, memo, true);
    }

    /**
     * The tile sizes of a split whose innermost tile {@code inner} may not divide its extent: the
     * other levels are a factorisation of {@code ceil(extent / inner)} drawn uniformly (the outer
     * level implicit), so the split covers {@code ceil(extent / inner) * inner} with a tail of
     * less than one innermost tile.
     */
    public static List<Integer> withInnermost(
            FactorizationMemo memo, long extent, int levels, int inner, SplittableRandom rng) {
        if (inner < 1 || inner > extent) {
            throw new KilnException("innermost tile " + inner + " does not fit a loop of extent " + extent);
        }
        return InnermostTiles.around(memo, (extent + inner - 1) / inner, levels, inner, rng);
    }

    private static List<int[]> enumerate(
            HardwareParams hw, int elementBytes, List<Long> extents, FactorizationMemo memo, boolean tail) {
        int n = extents.size();
        int lanes = hw.lanes(elementBytes);
        int maxInner = hw.maxInnermostSplitFactor();
        // a vector axis that whole vectors do not divide (24 channels on AVX-512) takes tiles of whole half vectors,
        // each row a zmm and a ymm: its registers counted whole
        boolean halves = extents.get(n - 1) % lanes != 0 && halfVectors(lanes);
        List<int[]> out = new ArrayList<>();
        for (int v : memo.divisors(extents.get(n - 1))) {
            if (v > maxInner) break;
            if (v % lanes != 0 && !(halves && v % (lanes / 2) == 0)) continue;
            int vectors = (v + lanes - 1) / lanes;
            int[] tile = new int[n];
            tile[n - 1] = v;
            rows(hw, extents, memo, tile, 0, 1, vectors, tail ? 1 : 0, out);
        }
        return out;
    }

    /** Row tiles from {@code axis} on; {@code tails} of them (0 or 1) must not divide their loop. */
    private static void rows(
            HardwareParams hw,
            List<Long> extents,
            FactorizationMemo memo,
            int[] tile,
            int axis,
            long rows,
            int vectors,
            int tails,
            List<int[]> out) {
        int regs = hw.vectorRegisters();
        if (axis == tile.length - 1) {
            if (tails == 0 && fits(hw, rows, vectors)) out.add(tile.clone());
            return;
        }
        long extent = extents.get(axis);
        List<Integer> sizes = memo.divisors(extent);
        if (tails > 0) {
            sizes = new ArrayList<>();
            for (int d = 1; d <= Math.min(extent, hw.maxInnermostSplitFactor()); d++) sizes.add(d);
        }
        for (int d : sizes) {
            if (d > hw.maxInnermostSplitFactor() || rows * d * vectors + vectors + 1 > regs) break;
            tile[axis] = d;
            boolean divides = extent % d == 0;
            if (divides || tails > 0) {
                rows(hw, extents, memo, tile, axis + 1, rows * d, vectors, divides ? tails : tails - 1, out);
            }
        }
        tile[axis] = 0;
    }
}
