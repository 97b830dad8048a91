package dev.kiln.lower;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;

import dev.kiln.ir.IterVar;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.ScheduleBuilder.StageRef;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * GPU schedules written by hand the way Ansor's GPU sketch and its random annotation build them
 * (ansor-notes §4.4 and §5): the output's computation moves into a {@code .local} cache-write
 * stage tiled "SSSRRSRS"; the output is tiled like it in four spatial levels, with the outer
 * three fused and bound to blockIdx.x, vthread and threadIdx.x; the local stage is computed at
 * the threadIdx loop; every input of the local stage gets a {@code .shared} cache-read stage
 * computed at the outer reduction loop, fetched cooperatively (its loops fused, split by the
 * block's thread count, the inner part bound to threadIdx.x).
 */
public final class GpuSchedules {
    private GpuSchedules() {}

    /**
     * Tile sizes of one "SSSRRSRS" schedule. {@code spatial[a]} holds the four inner tile lengths
     * of spatial axis a (vthread, threadIdx, outer register tile, inner register tile: the
     * blockIdx length is what remains); {@code reduce[r]} holds the two inner lengths of reduce
     * axis r.
     */
    public record Tiles(int[][] spatial, int[][] reduce) {
        /** Threads per block: the product of the threadIdx lengths. */
        public int threads() {
            int t = 1;
            for (int[] s : spatial) t *= s[1];
            return t;
        }
    }

    /** C[i, j] = sum_k A[i, k] * B[k, j]. */
    public static ComputeDAG matmul(int m, int n, int k) {
        Tensor A = placeholder("A", FLOAT32, m, k);
        Tensor B = placeholder("B", FLOAT32, k, n);
        IterVar r = reduceAxis(k, "k");
        return ComputeDAG.of(
                compute("C", shape(m, n), (i, j) -> sum(r, A.at(i, r).mul(B.at(r, j)))));
    }

    /**
     * A 2-D convolution in NCHW with zero padding {@code pad} and stride 1:
     * {@code pad} is a separate stage (computed by its own kernel), conv reads it.
     */
    public static ComputeDAG conv2d(int n, int c, int h, int w, int f, int kh, int kw, int pad) {
        Tensor data = placeholder("data", FLOAT32, n, c, h, w);
        Tensor kernel = placeholder("kernel", FLOAT32, f, c, kh, kw);
        int ph = h + 2 * pad, pw = w + 2 * pad;
        Tensor padded = compute(
                "pad",
                shape(n, c, ph, pw),
                (b, ch, y, x) -> Te.select(
                        y.ge(pad).and(y.lt(h + pad)).and(x.ge(pad)).and(x.lt(w + pad)),
                        data.at(
                                b,
                                ch,
                                y.sub(pad).max(0).min(h - 1),
                                x.sub(pad).max(0).min(w - 1)),
                        Te.f32(0)));
        IterVar rc = reduceAxis(c, "rc"), ry = reduceAxis(kh, "ry"), rx = reduceAxis(kw, "rx");
        int oh = ph - kh + 1, ow = pw - kw + 1;
        Tensor out = compute(
                "conv",
                shape(n, f, oh, ow),
                (b, ff, y, x) -> sum(
                        List.of(rc, ry, rx),
                        padded.at(b, rc, y.add(ry), x.add(rx)).mul(kernel.at(ff, rc, ry, rx))));
        return ComputeDAG.of(out);
    }

    /**
     * The Ansor GPU multi-level tiling of output stage {@code out} (spatial axes, then reduce
     * axes, by name), with shared-memory cache reads of {@code sharedInputs}.
     */
    public static Schedule multiLevelTiling(
            ComputeDAG dag,
            String out,
            List<String> spatialAxes,
            List<String> reduceAxes,
            List<String> sharedInputs,
            Tiles tiles) {
        return multiLevelTiling(dag, out, spatialAxes, reduceAxes, sharedInputs, List.of(), tiles);
    }

    /**
     * As above; the stages in {@code inline} (producers of the cached inputs, such as padding)
     * are then computed inline, into their {@code .shared} copies.
     */
    public static Schedule multiLevelTiling(
            ComputeDAG dag,
            String out,
            List<String> spatialAxes,
            List<String> reduceAxes,
            List<String> sharedInputs,
            List<String> inline,
            Tiles tiles) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        tile(s, out, spatialAxes, reduceAxes, sharedInputs, tiles);
        for (String st : inline) s.stage(st).computeInline();
        return s.build();
    }

    /** Applies the multi-level tiling steps to a builder (which may get more steps afterwards). */
    public static void tile(
            ScheduleBuilder s,
            String out,
            List<String> spatialAxes,
            List<String> reduceAxes,
            List<String> sharedInputs,
            Tiles tiles) {
        StageRef C = s.stage(out);
        StageRef local = C.cacheWrite("local");
        List<Integer> splitSteps = new ArrayList<>();
        for (int a = 0; a < spatialAxes.size(); a++) {
            int[] t = tiles.spatial()[a];
            local.split(spatialAxes.get(a), t[0], t[1], t[2], t[3]);
            splitSteps.add(s.lastStep());
        }
        for (int r = 0; r < reduceAxes.size(); r++) {
            int[] t = tiles.reduce()[r];
            local.split(reduceAxes.get(r), t[0], t[1]);
        }
        // S0 S1 S2 R0 R1 S3 R2 S4
        List<String> order = new ArrayList<>();
        for (int level = 0; level < 3; level++) for (String a : spatialAxes) order.add(a + "." + level);
        for (String r : reduceAxes) order.add(r + ".0");
        for (String r : reduceAxes) order.add(r + ".1");
        for (String a : spatialAxes) order.add(a + ".3");
        for (String r : reduceAxes) order.add(r + ".2");
        for (String a : spatialAxes) order.add(a + ".4");
        local.reorder(order.toArray(String[]::new));

        // The output follows the local stage's tiling in four levels.
        for (int a = 0; a < spatialAxes.size(); a++) C.followSplit(spatialAxes.get(a), splitSteps.get(a), 3);
        List<String> outOrder = new ArrayList<>();
        for (int level = 0; level < 4; level++) for (String a : spatialAxes) outOrder.add(a + "." + level);
        C.reorder(outOrder.toArray(String[]::new));
        local.computeAt(C, spatialAxes.getLast() + ".2");

        List<StageRef> shared = new ArrayList<>();
        for (String in : sharedInputs) {
            StageRef cache = s.stage(in).cacheRead("shared", local);
            cache.computeAt(local, reduceAxes.getLast() + ".0");
            shared.add(cache);
        }
        String[] axes = {"blockIdx.x", "vthread", "threadIdx.x"};
        for (int level = 0; level < 3; level++) {
            int l = level;
            C.bind(C.fuse(spatialAxes.stream().map(a -> a + "." + l).toArray(String[]::new)), axes[level]);
        }
        for (StageRef cache : shared) cooperativeFetch(cache, tiles.threads());
    }

    /**
     * A stage at root as its own kernel: all loops fused, split by {@code threads}, bound to blockIdx.x and
     * threadIdx.x.
     */
    public static void bindElementwise(StageRef stage, int threads) {
        ScheduleBuilder.Loop fused = stage.fuse(stage.loops().toArray(ScheduleBuilder.Loop[]::new));
        List<ScheduleBuilder.Loop> parts = stage.split(fused, threads);
        stage.bind(parts.get(0), "blockIdx.x");
        stage.bind(parts.get(1), "threadIdx.x");
    }

    /**
     * Fuses all loops of a cache-read stage, splits by the block's thread count, binds the inner part to threadIdx.x.
     */
    public static void cooperativeFetch(StageRef cache, int threads) {
        ScheduleBuilder.Loop fused = cache.fuse(cache.loops().toArray(ScheduleBuilder.Loop[]::new));
        List<ScheduleBuilder.Loop> parts = cache.split(fused, threads);
        cache.bind(parts.get(1), "threadIdx.x");
    }
}
