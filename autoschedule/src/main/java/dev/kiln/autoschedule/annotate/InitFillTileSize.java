package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The first annotation rule: every split of the sketch with undecided lengths gets a
 * factorisation of its extent drawn uniformly from all exact ones whose innermost tile is at
 * most {@link dev.kiln.autoschedule.HardwareParams#maxInnermostSplitFactor()} (so a prime
 * extent p is tiled only as 1 or p). Follow-splits follow their source when the steps are
 * replayed, which gives the concrete state.
 *
 * <p>Kiln's addition (CPU only): with probability {@code registerTileProbability} per
 * multi-level-tiled reduction stage ({@link RegisterTileSizes#groups}), the innermost tiles of its
 * spatial splits are first drawn among those that make a register tile
 * ({@link RegisterTileSizes#innermost}), and each split's factorisation is then drawn uniformly
 * among those with that innermost tile. Otherwise, or when no register tile fits, Ansor's uniform
 * draw. With probability {@code tailProbability} a register tile is drawn among those with a tail
 * ({@link RegisterTileSizes#tailCandidates}: a row tile that does not divide its loop), whose
 * split covers the loop with a guarded tail ({@link RegisterTileSizes#withInnermost}). With probability
 * {@code reductionBlockProbability} per such stage with a reduction of at least
 * {@link ReductionTileSizes#LARGE_REDUCTION}, the innermost reduction tiles are drawn among those whose product (the
 * block one level-0 reduction step covers, GotoBLAS's KC) is 128-384 ({@link ReductionTileSizes}), above Ansor's cap
 * of 64 on innermost tiles; the K-blocked programs need it ({@link InitKBlocking}). With probability
 * {@code weightStationaryProbability} per such stage that reads a large constant weight
 * ({@link WeightStationaryTiles}), the splits of the axes the weight does not depend on are drawn with level-0
 * factor 1, so the parallel level-0 tiles split the output channels alone and each thread reads only its own
 * blocks of weights.
 */
public final class InitFillTileSize {
    public static final String NAME = "InitFillTileSize";

    /** The default share of register-tile draws per tiled stage. */
    public static final double DEFAULT_REGISTER_TILE_PROBABILITY = 0.5;

    /** The default share of register tiles drawn with a tail (when the loops allow one). */
    public static final double DEFAULT_TAIL_PROBABILITY = 0.25;

    /**
     * The default share of reduction blocks of 128-384 per tiled stage with a large reduction: half, as register
     * tiles (GemmStudy, quiet: every K-blocked hand schedule that beats OpenBLAS has KC 128 or 256).
     */
    public static final double DEFAULT_REDUCTION_BLOCK_PROBABILITY = 0.5;

    /**
     * The default share of weight-stationary draws per stage with large constant weights: a quarter, so the rest of
     * the population keeps Ansor's splits (a row split is as fast where the weights stay in cache).
     */
    public static final double DEFAULT_WEIGHT_STATIONARY_PROBABILITY = 0.25;

    private final FactorizationMemo memo;
    private final double registerTileProbability;
    private final double tailProbability;
    private final double reductionBlockProbability;
    private final double weightStationaryProbability;
    private final Map<Sketch, List<RegisterTileSizes.Group>> groups =
            Collections.synchronizedMap(new IdentityHashMap<>());
    private final Map<Sketch, List<ReductionTileSizes.Group>> reductionGroups =
            Collections.synchronizedMap(new IdentityHashMap<>());
    /** Per sketch, each register-tile group's weight-stationary splits ({@link WeightStationaryTiles}). */
    private final Map<Sketch, List<List<Integer>>> stationaryGroups =
            Collections.synchronizedMap(new IdentityHashMap<>());

    /** Tile filling with {@link #DEFAULT_REGISTER_TILE_PROBABILITY}. */
    public InitFillTileSize(FactorizationMemo memo) {
        this(memo, DEFAULT_REGISTER_TILE_PROBABILITY);
    }

    /**
     * Tile filling that draws register tiles with this probability per tiled stage (0: Ansor's
     * uniform draw only, no reduction blocks either), {@link #DEFAULT_TAIL_PROBABILITY} of them with a tail.
     */
    public InitFillTileSize(FactorizationMemo memo, double registerTileProbability) {
        this(memo, registerTileProbability, DEFAULT_TAIL_PROBABILITY);
    }

    /**
     * Tile filling with register tiles drawn with {@code registerTileProbability}, {@code tailProbability} of them with
     * a tail, and reduction blocks with {@link #DEFAULT_REDUCTION_BLOCK_PROBABILITY} (0 when
     * {@code registerTileProbability} is 0: Ansor's draw).
     */
    public InitFillTileSize(FactorizationMemo memo, double registerTileProbability, double tailProbability) {
        this(
                memo,
                registerTileProbability,
                tailProbability,
                registerTileProbability == 0 ? 0 : DEFAULT_REDUCTION_BLOCK_PROBABILITY);
    }

    /**
     * Tile filling with register tiles, their tails and reduction blocks at these probabilities, and weight-stationary
     * splits with {@link #DEFAULT_WEIGHT_STATIONARY_PROBABILITY} (0 when {@code registerTileProbability} is 0).
     */
    public InitFillTileSize(
            FactorizationMemo memo,
            double registerTileProbability,
            double tailProbability,
            double reductionBlockProbability) {
        this(
                memo,
                registerTileProbability,
                tailProbability,
                reductionBlockProbability,
                registerTileProbability == 0 ? 0 : DEFAULT_WEIGHT_STATIONARY_PROBABILITY);
    }

    /** Tile filling with each of Kiln's draws at its own probability per tiled stage. */
    public InitFillTileSize(
            FactorizationMemo memo,
            double registerTileProbability,
            double tailProbability,
            double reductionBlockProbability,
            double weightStationaryProbability) {
        if (!(weightStationaryProbability >= 0 && weightStationaryProbability <= 1)) {
            throw new KilnException(
                    "weightStationaryProbability must be in [0, 1], not " + weightStationaryProbability);
        }
        if (!(reductionBlockProbability >= 0 && reductionBlockProbability <= 1)) {
            throw new KilnException("reductionBlockProbability must be in [0, 1], not " + reductionBlockProbability);
        }
        if (!(registerTileProbability >= 0 && registerTileProbability <= 1)) {
            throw new KilnException("registerTileProbability must be in [0, 1], not " + registerTileProbability);
        }
        if (!(tailProbability >= 0 && tailProbability <= 1)) {
            throw new KilnException("tailProbability must be in [0, 1], not " + tailProbability);
        }
        this.memo = memo;
        this.registerTileProbability = registerTileProbability;
        this.tailProbability = tailProbability;
        this.reductionBlockProbability = reductionBlockProbability;
        this.weightStationaryProbability = weightStationaryProbability;
    }

    /** The sketch's steps with every undecided split filled. */
    public List<Step> fill(SearchTask task, Sketch sketch, SplittableRandom rng) {
        List<Step> steps = new ArrayList<>(sketch.steps());
        Map<Integer, Integer> inner = registerTiles(task, sketch, rng);
        Map<Integer, Integer> blocks = reductionBlocks(task, sketch, rng);
        Set<Integer> stationary = weightStationary(task, sketch, rng);
        for (int i = 0; i < steps.size(); i++) {
            if (!(steps.get(i) instanceof SplitStep sp) || sp.isConcrete()) continue;
            if (sp.extent() == null) {
                throw new KilnException("split step " + i + " of the sketch has undecided lengths but no known extent");
            }
            Integer kc = blocks.get(i);
            if (kc != null) {
                steps.set(
                        i,
                        sp.withLengths(ReductionTileSizes.withInnermost(
                                memo, sp.extent(), sp.lengths().size(), kc, rng)));
                continue;
            }
            Integer last = inner.get(i);
            if (last != null && sp.extent() % last != 0) {
                int levels = sp.lengths().size();
                List<Integer> lengths = stationary.contains(i) && levels >= 2
                        ? wholeAround(sp.extent(), levels, last, rng)
                        : RegisterTileSizes.withInnermost(memo, sp.extent(), levels, last, rng);
                steps.set(i, sp.withLengths(lengths));
                continue;
            }
            List<List<Integer>> schemes = memo.schemes(
                    sp.extent(), sp.lengths().size(), task.hardware().maxInnermostSplitFactor());
            if (last != null)
                schemes = schemes.stream().filter(l -> l.getLast().equals(last)).toList();
            if (stationary.contains(i)) {
                List<List<Integer>> whole = whole(schemes, sp.extent());
                if (!whole.isEmpty()) schemes = whole; // else the extent is longer than the inner tiles may cover
            }
            steps.set(i, sp.withLengths(schemes.get(rng.nextInt(schemes.size()))));
        }
        return steps;
    }

    /** The innermost tile chosen for each split step of a register tile (none on a GPU or when p = 0). */
    private Map<Integer, Integer> registerTiles(SearchTask task, Sketch sketch, SplittableRandom rng) {
        if (registerTileProbability == 0 || task.target().kind().isGpu()) return Map.of();
        Map<Integer, Integer> out = new HashMap<>();
        for (RegisterTileSizes.Group g : groups.computeIfAbsent(sketch, k -> RegisterTileSizes.groups(task.dag(), k))) {
            if (rng.nextDouble() >= registerTileProbability) continue;
            List<Long> extents = new ArrayList<>();
            for (int at : g.splitSteps())
                extents.add(((SplitStep) sketch.steps().get(at)).extent());
            int[] tile = RegisterTileSizes.innermost(
                    task.hardware(), g.registerBytes(task.target()), extents, memo, tailProbability, rng);
            if (tile == null) continue;
            for (int k = 0; k < tile.length; k++) out.put(g.splitSteps().get(k), tile[k]);
        }
        return out;
    }

    /** The innermost tile chosen for each reduction split of a stage given a KC block (none on a GPU or when p = 0). */
    private Map<Integer, Integer> reductionBlocks(SearchTask task, Sketch sketch, SplittableRandom rng) {
        if (reductionBlockProbability == 0 || task.target().kind().isGpu()) return Map.of();
        Map<Integer, Integer> out = new HashMap<>();
        for (ReductionTileSizes.Group g :
                reductionGroups.computeIfAbsent(sketch, k -> ReductionTileSizes.groups(task.dag(), k))) {
            if (g.reduction() < ReductionTileSizes.LARGE_REDUCTION || rng.nextDouble() >= reductionBlockProbability)
                continue;
            List<int[]> tiles = ReductionTileSizes.candidates(g.extents(), memo);
            if (tiles.isEmpty()) continue;
            int[] tile = tiles.get(rng.nextInt(tiles.size()));
            for (int k = 0; k < tile.length; k++) out.put(g.splitSteps().get(k), tile[k]);
        }
        return out;
    }

    /** The schemes among {@code schemes} that cover {@code extent} below level 0 (level-0 factor 1). */
    private static List<List<Integer>> whole(List<List<Integer>> schemes, long extent) {
        return schemes.stream()
                .filter(l -> l.stream().mapToLong(Integer::longValue).reduce(1, (x, y) -> x * y) == extent)
                .toList();
    }

    /**
     * A split of {@code extent} into {@code levels} tile sizes whose innermost {@code inner} leaves a tail, with the
     * level-0 factor 1: the middle levels a factorisation of {@code ceil(extent / inner)} drawn uniformly.
     */
    private List<Integer> wholeAround(long extent, int levels, int inner, SplittableRandom rng) {
        long blocks = (extent + inner - 1) / inner;
        List<List<Integer>> heads = whole(memo.schemes(blocks, levels - 1, Integer.MAX_VALUE), blocks);
        List<Integer> out = new ArrayList<>(heads.get(rng.nextInt(heads.size())));
        out.add(inner);
        return out;
    }

    /**
     * The split steps drawn weight-stationary: for each register-tile group whose stage reads large constant weights
     * ({@link WeightStationaryTiles}), with probability {@code weightStationaryProbability}, its splits of the axes
     * the weights do not depend on (none on a GPU or when p = 0).
     */
    private Set<Integer> weightStationary(SearchTask task, Sketch sketch, SplittableRandom rng) {
        if (weightStationaryProbability == 0
                || task.target().kind().isGpu()
                || task.layoutFree().isEmpty()) return Set.of();
        List<List<Integer>> perGroup = stationaryGroups.computeIfAbsent(sketch, k -> {
            List<List<Integer>> out = new ArrayList<>();
            for (RegisterTileSizes.Group g : groups.computeIfAbsent(k, x -> RegisterTileSizes.groups(task.dag(), x)))
                out.add(WeightStationaryTiles.splits(task, k.state().steps(), g));
            return List.copyOf(out);
        });
        Set<Integer> out = new HashSet<>();
        for (List<Integer> splits : perGroup) {
            if (splits.isEmpty() || rng.nextDouble() >= weightStationaryProbability) continue;
            out.addAll(splits);
        }
        return out;
    }

    /** Fills the tile sizes and replays the steps: the concrete state the other rules start from. */
    public LoopState apply(SearchTask task, Sketch sketch, SplittableRandom rng) {
        List<Step> steps = fill(task, sketch, rng);
        try {
            return new Schedule(task.dag(), steps).replay();
        } catch (KilnException e) {
            throw new InvalidSample(NAME, e.getMessage());
        }
    }
}
