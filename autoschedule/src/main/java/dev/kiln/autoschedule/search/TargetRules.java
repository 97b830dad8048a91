package dev.kiln.autoschedule.search;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.CheckJvmTiles;
import dev.kiln.autoschedule.annotate.CheckTensorizedTiles;
import dev.kiln.autoschedule.annotate.FactorizationMemo;
import dev.kiln.autoschedule.annotate.InitChangeComputeLocation;
import dev.kiln.autoschedule.annotate.InitKBlocking;
import dev.kiln.autoschedule.annotate.InitParallel;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.annotate.InitReadOrder;
import dev.kiln.autoschedule.annotate.InitRule;
import dev.kiln.autoschedule.annotate.InitUnroll;
import dev.kiln.autoschedule.annotate.InitVectorization;
import dev.kiln.autoschedule.gpu.AddCacheReadShared;
import dev.kiln.autoschedule.gpu.AddCacheWriteForFusion;
import dev.kiln.autoschedule.gpu.CheckGpuLimits;
import dev.kiln.autoschedule.gpu.InitThreadBind;
import dev.kiln.autoschedule.gpu.TensorCoreTiling;
import dev.kiln.autoschedule.mutation.MutateAutoUnroll;
import dev.kiln.autoschedule.mutation.MutateComputeLocation;
import dev.kiln.autoschedule.mutation.MutateKBlocking;
import dev.kiln.autoschedule.mutation.MutateParallel;
import dev.kiln.autoschedule.mutation.MutateReductionTile;
import dev.kiln.autoschedule.mutation.MutateRegisterTile;
import dev.kiln.autoschedule.mutation.MutateTileSize;
import dev.kiln.autoschedule.mutation.WeightedMutation;
import dev.kiln.autoschedule.sketch.AddCacheReadPack;
import dev.kiln.autoschedule.sketch.AddCacheWrite;
import dev.kiln.autoschedule.sketch.AddRfactor;
import dev.kiln.autoschedule.sketch.AlwaysInline;
import dev.kiln.autoschedule.sketch.FuseRowReductions;
import dev.kiln.autoschedule.sketch.MultiLevelTiling;
import dev.kiln.autoschedule.sketch.MultiLevelTilingTensorize;
import dev.kiln.autoschedule.sketch.MultiLevelTilingWithFusion;
import dev.kiln.autoschedule.sketch.MultiLevelTilingWithRowFusion;
import dev.kiln.autoschedule.sketch.SimplifyComputeWithConstTensor;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.autoschedule.sketch.SketchGenerator;
import dev.kiln.autoschedule.sketch.SketchRule;
import dev.kiln.autoschedule.sketch.SkipStage;
import dev.kiln.autoschedule.sketch.VectorLanesOutsideReduction;
import dev.kiln.ir.KilnException;
import dev.kiln.target.Target;
import java.util.ArrayList;
import java.util.List;

/**
 * The rules the search uses for one kind of target, built here and only here for every kind (as
 * TVM's {@code sketch_policy.cc} builds its lists per target): the sketch rules in the order the
 * generator tries them, the annotation rules applied after tile filling, and the mutation rules
 * with their weights. {@link #of} picks them by the target's kind, so a new kind of target is one
 * more case of its switch. The policies ({@link RandomSearchPolicy#forTask},
 * {@code EvolutionarySearchPolicy.forTask}) take their rules from here.
 *
 * @param sketchRules  tried in this order on every stage, last stage first ({@link SketchGenerator})
 * @param initRules    applied in this order after the tile sizes are filled ({@link InitPopulation})
 * @param mutations    evolution's mutations, each picked with probability weight / total weight
 */
public record TargetRules(List<SketchRule> sketchRules, List<InitRule> initRules, List<WeightedMutation> mutations) {
    public TargetRules {
        sketchRules = List.copyOf(sketchRules);
        initRules = List.copyOf(initRules);
        mutations = List.copyOf(mutations);
        if (sketchRules.isEmpty()) throw new KilnException("target rules need at least one sketch rule");
        if (mutations.isEmpty()) throw new KilnException("target rules need at least one mutation rule");
    }

    /**
     * The rules for {@code target}: its kind's, and {@link #jvm()} for the pure-JVM backend's CPU target (unless the
     * system property {@code kiln.search.jvmRules} is {@code false}: then the CPU's, for before/after comparisons).
     */
    public static TargetRules of(Target target) {
        boolean jvmRules = !"false".equals(System.getProperty("kiln.search.jvmRules"));
        return jvmRules && CheckJvmTiles.isJvm(target) ? jvm() : of(target.kind());
    }

    /** The rules for a kind of target. */
    public static TargetRules of(Target.Kind kind) {
        return switch (kind) {
            case CPU -> cpu();
            case CUDA -> cuda();
        };
    }

    /** The rules for {@code task}'s target. */
    public static TargetRules of(SearchTask task) {
        return of(task.target());
    }

    /**
     * Kiln's CPU rules. Sketches: Ansor's CPU rules in its order (AlwaysInline, AddRfactor, [Kiln's {@link
     * MultiLevelTilingTensorize}, for a stage the CPU's dot-product instructions can compute,] AddCacheWrite,
     * MultiLevelTilingWithFusion (Kiln's: a stage that reads an input without reuse, a depthwise conv, gets only its
     * fused sketches), MultiLevelTiling "SSRSRS", SkipStage) with Kiln's {@link MultiLevelTilingWithRowFusion} before
     * AddCacheWrite (one more sketch for a matmul whose result a softmax or a norm reduces row by row: everything
     * computed per block of output rows), Kiln's {@link FuseRowReductions} (the same for an input reduced row by row:
     * a softmax or norm alone), {@link AddCacheReadPack}, so an operand the register tile reads in rows gets sketches
     * with and without a packed copy ({@link #withRowPacking()} also packs the other operand, read along the
     * reduction, where the first is packed), and Kiln's {@link VectorLanesOutsideReduction} (a pooling or other
     * reduction without reuse gets sketches with its reduction loops outside whole vectors of its innermost axis, so
     * that it can be vectorised) before SkipStage. Ansor's {@link SimplifyComputeWithConstTensor} comes right after
     * AlwaysInline: Winograd's transform stages get their constant-matrix loops unrolled (Kiln keeps a vector of
     * channels innermost below them).
     * Tile filling (InitFillTileSize) draws register tiles and, for half of the stages with a reduction of 256 or
     * more, a reduction block of 128-384 (ReductionTileSizes). Annotation: Kiln's {@link InitKBlocking} (the tiled
     * stages where it matters get the GotoBLAS loop order, the outer reduction level in front of the level-1 spatial
     * loops: nine in ten of those with such a reduction block, half of the others), InitChangeComputeLocation
     * (Kiln's: a depthwise conv's or a pooling's padding never at root), Kiln's {@link InitReadOrder} (a transposing
     * copy's loops reordered so that it reads its source contiguously), InitParallel, InitUnroll {0, 16, 64, 512},
     * Kiln's InitVectorization, which also vectorises register-tile rows wider than Ansor's limit, and Kiln's {@link
     * CheckTensorizedTiles}, which refuses a tensorized register tile over the vector registers (evolution's children
     * too). Mutations: Ansor's CPU weights (tile size 0.90, auto-unroll 0.04, compute location 0.05, parallel 0.01)
     * with 0.10 of the tile-size weight given to Kiln's {@link MutateRegisterTile}, which redraws a whole register
     * tile at once, 0.05 to Kiln's {@link MutateKBlocking}, which toggles the K-blocking of one stage, and 0.05 to
     * Kiln's {@link MutateReductionTile}, which moves a stage's reduction block among 128-384.
     */
    public static TargetRules cpu() {
        return new TargetRules(
                List.of(
                        new AlwaysInline(),
                        new SimplifyComputeWithConstTensor(),
                        new AddRfactor(),
                        MultiLevelTilingTensorize.cpu(),
                        MultiLevelTilingWithRowFusion.cpu(),
                        new FuseRowReductions(),
                        new AddCacheWrite(),
                        MultiLevelTilingWithFusion.cpu(),
                        new MultiLevelTiling(MultiLevelTiling.CPU_STRUCTURE),
                        new AddCacheReadPack(),
                        new VectorLanesOutsideReduction(),
                        new SkipStage()),
                List.of(
                        new InitKBlocking(),
                        new InitChangeComputeLocation(),
                        new InitReadOrder(),
                        new InitParallel(),
                        InitUnroll.cpu(),
                        new InitVectorization(),
                        new CheckTensorizedTiles()),
                cpuMutations(0.70, 0.10, 0.05, 0.05));
    }

    /**
     * The rules of the pure-JVM backend's target ({@code Target.jvm()}, a CPU target with triple {@code jvm}):
     * {@link #cpu()} with {@link CheckJvmTiles} last, which refuses samples (and evolution's children) whose register
     * tile the JVM backend cannot keep in vector locals: a vectorized tile loop that is not a whole number of vectors,
     * more rows than the generator unrolls, more vectors than it promotes. Programs of that kind made up half of a
     * 28-trial JVM tuning log and ran 10-300x slower than its best (up to 7 s per call, so they also ate most of the
     * tuning time). Auto-unroll draws from {@link InitUnroll#JVM_STEPS} (no 512: such bodies can pass HotSpot's
     * 8000-byte compilation limit and run interpreted), in sampling and in the auto-unroll mutation.
     */
    public static TargetRules jvm() {
        TargetRules cpu = cpu();
        List<InitRule> init = new ArrayList<>();
        for (InitRule r : cpu.initRules()) init.add(r instanceof InitUnroll ? new InitUnroll(InitUnroll.JVM_STEPS) : r);
        init.add(new CheckJvmTiles());
        List<WeightedMutation> mutations = cpu.mutations().stream()
                .map(m -> m.rule() instanceof MutateAutoUnroll
                        ? new WeightedMutation(new MutateAutoUnroll(InitUnroll.JVM_STEPS), m.weight())
                        : m)
                .toList();
        return new TargetRules(cpu.sketchRules(), init, mutations);
    }

    /**
     * Ansor's CPU rules as Ansor has them (for comparisons with Kiln's, e.g. {@code ./kiln
     * space-bench}): {@link #cpu()} without AddCacheReadPack and InitKBlocking, with Ansor's
     * InitChangeComputeLocation and InitVectorization, and Ansor's mutations and weights (no register-tile or
     * K-blocking mutation).
     */
    public static TargetRules ansorCpu() {
        return new TargetRules(
                List.of(
                        new AlwaysInline(),
                        new SimplifyComputeWithConstTensor(),
                        new AddRfactor(),
                        new AddCacheWrite(),
                        MultiLevelTilingWithFusion.ansorCpu(),
                        new MultiLevelTiling(MultiLevelTiling.CPU_STRUCTURE),
                        new SkipStage()),
                List.of(
                        InitChangeComputeLocation.ansor(),
                        new InitParallel(),
                        InitUnroll.cpu(),
                        InitVectorization.ansor()),
                cpuMutations(0.90, 0, 0, 0));
    }

    /**
     * Ansor's CPU mutations (auto-unroll 0.04, compute location 0.05, parallel 0.01) with the given
     * tile-size weight, and Kiln's register-tile, K-blocking and reduction-block mutations right after it
     * when their weights are positive (the order is part of the seeded search: the roulette draws over the
     * list in order).
     */
    private static List<WeightedMutation> cpuMutations(
            double tileSize, double registerTile, double kBlocking, double reductionTile) {
        List<WeightedMutation> out = new ArrayList<>();
        out.add(new WeightedMutation(new MutateTileSize(), tileSize));
        if (registerTile > 0) out.add(new WeightedMutation(new MutateRegisterTile(), registerTile));
        if (kBlocking > 0) out.add(new WeightedMutation(new MutateKBlocking(), kBlocking));
        if (reductionTile > 0) out.add(new WeightedMutation(new MutateReductionTile(), reductionTile));
        out.add(new WeightedMutation(new MutateAutoUnroll(InitUnroll.CPU_STEPS), 0.04));
        out.add(new WeightedMutation(new MutateComputeLocation(), 0.05));
        out.add(new WeightedMutation(new MutateParallel(), 0.01));
        return List.copyOf(out);
    }

    /**
     * The CUDA rules (ansor-notes §4.2 and §5). Sketches: first Kiln's {@link TensorCoreTiling}
     * (one more sketch, tensorized with wmma, for a float16/bfloat16 matmul on sm_80 or newer; the
     * others still apply), then in Ansor's GPU order: {@link AddCacheReadShared}, AlwaysInline
     * (any non-reducing intermediate stage on a GPU),
     * {@link AddCacheWriteForFusion} (Kiln's: a {@code .local} accumulator for a stage about to be
     * fused into its consumer, which TVM gets by scope inference), AddCacheWrite (a {@code .local}
     * accumulator), MultiLevelTilingWithFusion ("SSSRRSRS", the consumer fused at level 3),
     * MultiLevelTiling ("SSSRRSRS"), SkipStage. Left out: <b>CrossThreadReduction</b>, because
     * Kiln's GPU lowering refuses a reduction loop bound to threads (VerifyThreadBindings: several
     * threads would update one element; there is no cross-thread reduction lowering yet), so a
     * small-output reduction keeps its reduction serial in each thread; SpecialComputeLocationGPU
     * and SimplifyComputeWithConstTensor, which act on operator attributes Kiln does not have. So
     * the GPU sketch counts of ansor-notes §4.5 hold where no cross-thread reduction is involved
     * (matmul 512³: 1, conv2d+bn+relu: 1, max_pool2d: 1); where Ansor adds a cross-thread-reduction
     * sketch (matmul 8x8x1024: 2, min: 2, softmax: 4) Kiln has only the others (1, 1, 1); a rank-0
     * output has no sketch Kiln can bind.
     *
     * <p>Annotation after tile filling: {@link InitThreadBind}, InitUnroll with the GPU choices
     * {0, 16, 64, 512, 1024}, and {@link CheckGpuLimits}, which drops samples over the target's
     * thread, vthread or shared-memory limits before they are measured. Mutations with Ansor's GPU
     * weights: tile size 0.90, auto-unroll 0.10 (over the GPU choices).
     */
    public static TargetRules cuda() {
        return new TargetRules(
                List.of(
                        new TensorCoreTiling(),
                        new AddCacheReadShared(),
                        new AlwaysInline(),
                        new AddCacheWriteForFusion(),
                        new AddCacheWrite(),
                        new MultiLevelTilingWithFusion(MultiLevelTiling.GPU_STRUCTURE, List.of(3)),
                        new MultiLevelTiling(MultiLevelTiling.GPU_STRUCTURE),
                        new SkipStage()),
                List.of(new InitThreadBind(), new InitUnroll(InitUnroll.GPU_STEPS), new CheckGpuLimits()),
                List.of(
                        new WeightedMutation(new MutateTileSize(), 0.90),
                        new WeightedMutation(new MutateAutoUnroll(InitUnroll.GPU_STEPS), 0.10)));
    }

    /**
     * These rules with {@link AddCacheReadPack} also packing the operand read along the reduction (A of
     * a matmul) where the other is packed: a third sketch per packed one. Not in {@link #cpu()}: it did
     * not help in GemmStudy's same-process A/B; to be measured quietly before it joins the default.
     */
    public TargetRules withRowPacking() {
        return new TargetRules(
                sketchRules.stream()
                        .map(r -> r instanceof AddCacheReadPack ? AddCacheReadPack.withRows() : r)
                        .toList(),
                initRules,
                mutations);
    }

    /** A sketch generator with these sketch rules. */
    public SketchGenerator sketchGenerator() {
        return new SketchGenerator(sketchRules);
    }

    /** The sketches of {@code task} under these rules. */
    public List<Sketch> sketches(SearchTask task) {
        return sketchGenerator().generate(task);
    }

    /**
     * A sampler of {@code sketches} with these annotation rules (a fresh factorisation memo, the default give-up
     * limit).
     */
    public InitPopulation population(SearchTask task, List<Sketch> sketches) {
        return new InitPopulation(
                task, sketches, initRules, new FactorizationMemo(), InitPopulation.DEFAULT_MAX_FRUITLESS_DRAWS);
    }

    /** {@code n} distinct programs of {@code task}'s sketches under these rules, sampled from {@code rng}. */
    public InitPopulation.Result sample(SearchTask task, int n, java.util.SplittableRandom rng) {
        return population(task, sketches(task)).sample(n, rng);
    }

    /** These rules with {@code custom} sketch rules tried before their own (Ansor's custom sketch rules). */
    public TargetRules withCustomSketchRules(List<SketchRule> custom) {
        return new TargetRules(
                java.util.stream.Stream.concat(custom.stream(), sketchRules.stream())
                        .toList(),
                initRules,
                mutations);
    }
}
