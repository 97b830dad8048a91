package dev.kiln.cuda;

import dev.kiln.ir.DType;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.CudaTensorIntrinsics;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.ScheduleBuilder.StageRef;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;

/**
 * A Tensor Core matmul written by hand: {@code C[i, j] = sum_k float32(A[i, k]) * float32(B[k, j])}
 * (or {@code B[j, k]}) with A and B float16 or bfloat16, or float32 on TF32 Tensor Cores, each
 * block a tile of warps, each warp {@code tilesI x tilesJ} fragments of 16 x 16, A and B staged
 * into shared memory per {@code kTiles * 16} of k, {@code kTiles * 8} for TF32 (cache_read stages
 * whose rows are the fragments' rows, fetched cooperatively), every 16 x 16 x 16 (16 x 16 x 8) step
 * one wmma {@code mma_sync} ({@link CudaTensorIntrinsics}).
 * The output is in global memory; each warp keeps its tiles of it in accumulator fragments across
 * the k-stage loop (the code generator's {@code WmmaAccumulators}) and stores them after it.
 */
public final class TensorCoreSchedule {
    private TensorCoreSchedule() {}

    /**
     * The tile shape of one schedule.
     *
     * @param warpsI warps of the block along i (each a program thread bound to threadIdx.x)
     * @param warpsJ warps along j
     * @param tilesI 16-row fragments per warp along i
     * @param tilesJ 16-column fragments per warp along j
     * @param kTiles 16-deep (TF32: 8-deep) fragments of k per shared-memory stage
     */
    public record Tiles(int warpsI, int warpsJ, int tilesI, int tilesJ, int kTiles) {
        public Tiles {
            if (warpsI < 1 || warpsJ < 1 || tilesI < 1 || tilesJ < 1 || kTiles < 1) {
                throw new KilnException("Tensor Core tiles must be positive: " + warpsI + ", " + warpsJ + ", " + tilesI
                        + ", " + tilesJ + ", " + kTiles);
            }
        }

        /** Warps (program threads) per block. */
        public int warps() {
            return warpsI * warpsJ;
        }
    }

    /** The computation, stage "C" with axes i, j and reduce axis k; B is {@code [n, k]} when {@code bT}. */
    public static ComputeDAG matmul(DType in, long m, long n, long k, boolean bT) {
        if (CudaTensorIntrinsics.forInputs(in, bT) == null) {
            throw new KilnException("Tensor Core matmul inputs must be float16, bfloat16 or float32 (TF32), got " + in);
        }
        Tensor a = Te.placeholder("A", in, m, k);
        Tensor b = bT ? Te.placeholder("B", in, n, k) : Te.placeholder("B", in, k, n);
        Tensor c = Te.computeN("C", "matmul", Shape.of(m, n), idx -> {
            IterVar r = Te.reduceAxis(k, "k");
            var av = a.at(idx.get(0), r);
            var bv = bT ? b.at(idx.get(1), r) : b.at(r, idx.get(1));
            return in == DType.FLOAT32
                    ? Te.sum(r, av.mul(bv))
                    : Te.sum(r, av.cast(DType.FLOAT32).mul(bv.cast(DType.FLOAT32)));
        });
        return ComputeDAG.of(c);
    }

    /**
     * A dense layer's epilogue on the matmul: stage "C" as in {@link #matmul}, then
     * {@code D[i, j] = out(max(C[i, j] + bias[j], 0))} with {@code bias} a float32 placeholder of
     * {@code n} and {@code out} float32 or float16.
     */
    public static ComputeDAG denseBiasRelu(DType in, DType out, long m, long n, long k, boolean bT) {
        if (out != DType.FLOAT32 && out != DType.FLOAT16) {
            throw new KilnException("the epilogue's output must be float32 or float16, got " + out);
        }
        Tensor c = matmul(in, m, n, k, bT).outputs().getFirst();
        Tensor bias = Te.placeholder("bias", DType.FLOAT32, n);
        Tensor d = Te.computeN("D", "bias_relu", Shape.of(m, n), idx -> {
            var v = Te.maximum(c.at(idx.get(0), idx.get(1)).add(bias.at(idx.get(1))), Te.constant(DType.FLOAT32, 0));
            return out == DType.FLOAT32 ? v : v.cast(out);
        });
        return ComputeDAG.of(d);
    }

    /**
     * The schedule of {@link #denseBiasRelu}'s DAG: the matmul is scheduled as by {@link #of} into
     * a shared-memory tile of the block's C ({@code cache_write} to "shared", the global copy
     * inlined), and the epilogue runs in the same kernel: D's block tile is the matmul's, its warps
     * the matmul's warps, each warp writing its own tiles of D from the shared tile, its 32 lanes
     * sharing the elements. C never reaches global memory.
     */
    public static Schedule withEpilogue(ComputeDAG dag, DType in, boolean bT, Tiles t) {
        int f = CudaTensorIntrinsics.TILE;
        String intrinsic = CudaTensorIntrinsics.forInputs(in, bT);
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        StageRef c = s.stage("C").cacheWrite("shared");
        s.stage("C").computeInline();
        StageRef d = s.stage("D");
        d.split("i", t.warpsI(), t.tilesI() * f);
        d.split("j", t.warpsJ(), t.tilesJ() * f);
        d.reorder("i.0", "j.0", "i.1", "j.1", "i.2", "j.2");
        ScheduleBuilder.Loop block = d.fuse("i.0", "j.0");
        d.bind(block, "blockIdx.x");
        d.bind(d.fuse("i.1", "j.1"), "threadIdx.x");
        d.fuse("i.2", "j.2");
        c.computeAt(d, block);
        c.split("i", t.tilesI(), f);
        c.split("j", t.tilesJ(), f);
        c.split("k", t.kTiles(), intrinsic == null ? f : CudaTensorIntrinsics.kTile(intrinsic));
        c.reorder("i.0", "j.0", "k.0", "i.1", "j.1", "k.1", "i.2", "j.2", "k.2");
        c.tensorize("i.2", intrinsic);
        stageInputs(s, c, "k.0", t);
        c.bind(c.fuse("i.0", "j.0"), "threadIdx.x");
        return s.build();
    }

    /** A and B copied to shared memory at {@code c}'s loop {@code at}, fetched by the block's warps together. */
    private static void stageInputs(ScheduleBuilder s, StageRef c, String at, Tiles t) {
        for (String input : List.of("A", "B")) {
            StageRef cache = s.stage(input).cacheRead("shared", c);
            cache.computeAt(c, at);
            ScheduleBuilder.Loop fused = cache.fuse(cache.loops().toArray(ScheduleBuilder.Loop[]::new));
            List<ScheduleBuilder.Loop> parts = cache.split(fused, t.warps());
            cache.bind(parts.get(1), "threadIdx.x");
        }
    }

    /** The schedule of {@link #matmul}'s DAG with tiles {@code t}; the extents must divide. */
    public static Schedule of(ComputeDAG dag, DType in, boolean bT, Tiles t) {
        int f = CudaTensorIntrinsics.TILE;
        String intrinsic = CudaTensorIntrinsics.forInputs(in, bT);
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        StageRef c = s.stage("C");
        c.split("i", t.warpsI(), t.tilesI(), f);
        c.split("j", t.warpsJ(), t.tilesJ(), f);
        c.split("k", t.kTiles(), intrinsic == null ? f : CudaTensorIntrinsics.kTile(intrinsic));
        c.reorder("i.0", "j.0", "i.1", "j.1", "k.0", "i.2", "j.2", "k.1", "i.3", "j.3", "k.2");
        c.tensorize("i.3", intrinsic);
        StageRef as = s.stage("A").cacheRead("shared", c);
        as.computeAt(c, "k.0");
        StageRef bs = s.stage("B").cacheRead("shared", c);
        bs.computeAt(c, "k.0");
        c.bind(c.fuse("i.0", "j.0"), "blockIdx.x");
        c.bind(c.fuse("i.1", "j.1"), "threadIdx.x");
        for (StageRef cache : List.of(as, bs)) {
            ScheduleBuilder.Loop fused = cache.fuse(cache.loops().toArray(ScheduleBuilder.Loop[]::new));
            List<ScheduleBuilder.Loop> parts = cache.split(fused, t.warps());
            cache.bind(parts.get(1), "threadIdx.x");
        }
        return s.build();
    }
}
