package dev.kiln.samples;

import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;

/**
 * A hand-written CPU schedule for {@code C[i, j] = sum_k A[i, k] * B[k, j]} (stage "C"), the
 * way an expert writes one: multi-level tiling with a register tile accumulated in a local
 * cache-write buffer, the vector axis innermost, the register rows unrolled, and the outer tiles
 * fused and parallel.
 *
 * <pre>
 * parallel for io@jo:              # tiles of C (rows x cols), one task each
 *   C.local[rows, cols]             # the accumulator tile
 *   for ko:                         # k in steps of depth, so B's block stays in cache
 *    B.local[depth, cols] = B[..]   # packed once per (tile, ko), rows contiguous
 *    for ir, jr:                    # register blocks inside the tile
 *     for ki:                       # accumulators stay in registers across ki
 *       unrolled for ii in rowsPerBlock, vectorized for jj in vectorLanes * vectors:
 *         C.local[..] += A[i, k] * B[k, j]
 *   for i, vectorized j: C[i, j] = C.local[..]
 * </pre>
 */
public final class MatmulSchedules {
    private MatmulSchedules() {}

    /** Tile sizes of {@link #tiled}. */
    public record Tiles(int tileRows, int tileCols, int blockRows, int blockCols, int depth) {
        /** A 4 x 64 register block (16 zmm accumulators) in 32 x 256 tiles, k in steps of 256. */
        public static Tiles avx512() {
            return new Tiles(32, 256, 4, 64, 256);
        }
    }

    public static Schedule tiled(ComputeDAG dag, Tiles t) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("C");
        var local = c.cacheWrite("local");
        c.split("i", t.tileRows());
        c.split("j", t.tileCols());
        c.reorder("i.0", "j.0", "i.1", "j.1");
        local.computeAt(c, "j.0");
        c.parallel(c.fuse("i.0", "j.0"));
        c.vectorize("j.1");
        local.split("i", t.blockRows());
        local.split("j", t.blockCols());
        local.split("k", t.depth());
        local.reorder("k.0", "i.0", "j.0", "k.1", "i.1", "j.1");
        local.unroll("i.1");
        local.vectorize("j.1");
        // Pack B's depth x tileCols block into a contiguous local buffer once per (tile, k.0): the
        // micro-kernel then walks rows tileCols floats apart instead of a whole row of B (a new
        // page every step), and the block is reused by every register block of the tile.
        var packed = s.stage("B").cacheRead("local", local);
        packed.computeAt(local, "k.0");
        packed.vectorize(packed.loops().get(1));
        return s.build();
    }
}
