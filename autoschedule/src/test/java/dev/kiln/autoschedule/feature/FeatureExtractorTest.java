package dev.kiln.autoschedule.feature;

import static dev.kiln.autoschedule.feature.FeatureLayout.buffer;
import static dev.kiln.autoschedule.feature.FeatureLayout.log2p;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import dev.kiln.tir.ThreadAxis;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Features of small hand-built programs, against values worked out by hand from the definitions. */
class FeatureExtractorTest {
    private static final float EPS = 1e-4f;
    private static final FeatureExtractor CPU = new FeatureExtractor(64, false);

    static Buffer buf(String name, long... shape) {
        return Buffer.rowMajor(
                name, DType.FLOAT32, java.util.Arrays.stream(shape).boxed().toList(), MemoryScope.GLOBAL);
    }

    static For loop(Var v, long extent, ForKind kind, Stmt body) {
        return new For(v, IntImm.i32(0), IntImm.i32(extent), kind, null, body);
    }

    static BufferLoad load(Buffer b, Expr... idx) {
        return new BufferLoad(b, List.of(idx));
    }

    static Store store(Buffer b, Expr value, Expr... idx) {
        return new Store(b, List.of(idx), value);
    }

    static float f(float[] row, String name) {
        return row[FeatureLayout.names().indexOf(name)];
    }

    /** parallel i in 0..64 { vectorized j in 0..32 { C[i, j] = A[i, j] + B[j] } } */
    @Test
    void elementwiseAddWithBroadcast() {
        Var i = new Var("i"), j = new Var("j");
        Buffer a = buf("A", 64, 32), b = buf("B", 32), c = buf("C", 64, 32);
        Stmt body = loop(
                i,
                64,
                ForKind.PARALLEL,
                loop(j, 32, ForKind.VECTORIZED, store(c, load(a, i, j).add(load(b, j)), i, j)));
        ProgramFeatures pf = CPU.extract(new PrimFunc("add", List.of(a, b, c), body));
        assertThat(pf.statements()).containsExactly("C");
        float[] r = pf.row("C");

        // Computation: one float add per point, no index arithmetic.
        assertThat(f(r, "float_addsub")).isCloseTo(log2p(2048), within(EPS));
        for (String other : List.of("float_mad", "float_mul", "int_addsub", "int_mul", "int_divmod", "select_op")) {
            assertThat(f(r, other)).as(other).isZero();
        }
        assertThat(f(r, "vec_num")).isCloseTo(1f, within(EPS));
        assertThat(f(r, "vec_prod")).isCloseTo(log2p(32), within(EPS));
        assertThat(f(r, "vec_len")).isCloseTo(log2p(32), within(EPS));
        assertThat(f(r, "vec_type.kPosInnerSpatial")).isEqualTo(1f);
        assertThat(f(r, "parallel_prod")).isCloseTo(log2p(64), within(EPS));
        assertThat(f(r, "parallel_type.kPosOuterSpatial")).isEqualTo(1f);
        assertThat(f(r, "unroll_num")).isZero();
        assertThat(f(r, "unroll_type.kPosNone")).isEqualTo(1f);
        assertThat(f(r, "is_gpu")).isZero();
        assertThat(f(r, "threadIdx_x_len")).isEqualTo(1f); // log2p(1): unused

        // Buffers: C, A and B all have 128 lines; stable order C, A, B.
        int bc = buffer(0), ba = buffer(1), bb = buffer(2);
        assertThat(r[bc + FeatureLayout.B_ACCESS_TYPE + 1]).isEqualTo(1f); // write
        assertThat(r[ba + FeatureLayout.B_ACCESS_TYPE]).isEqualTo(1f); // read
        assertThat(r[bc + FeatureLayout.B_BYTES]).isCloseTo(log2p(8192), within(EPS));
        assertThat(r[bc + FeatureLayout.B_UNIQUE_BYTES]).isCloseTo(log2p(8192), within(EPS));
        assertThat(r[bc + FeatureLayout.B_LINES]).isCloseTo(log2p(128), within(EPS)); // 2048 * 4/64
        assertThat(r[bc + FeatureLayout.B_UNIQUE_LINES]).isCloseTo(log2p(128), within(EPS));
        assertThat(r[bc + FeatureLayout.B_REUSE_TYPE + 2]).isEqualTo(1f); // no reuse
        assertThat(r[bc + FeatureLayout.B_REUSE_CT]).isZero();
        assertThat(r[bc + FeatureLayout.B_BYTES_PER_REUSE]).isCloseTo(log2p(16384), within(EPS)); // / 0.5
        assertThat(r[bc + FeatureLayout.B_STRIDE]).isCloseTo(log2p(1), within(EPS));
        // B: reused across i (64 times), 128 bytes, 2 unique lines; distance = one j loop = 3 * 32 * 4 bytes.
        assertThat(r[bb + FeatureLayout.B_UNIQUE_BYTES]).isCloseTo(log2p(128), within(EPS));
        assertThat(r[bb + FeatureLayout.B_UNIQUE_LINES]).isCloseTo(log2p(2), within(EPS));
        assertThat(r[bb + FeatureLayout.B_REUSE_TYPE]).isEqualTo(1f); // loop multiple read
        assertThat(r[bb + FeatureLayout.B_REUSE_CT]).isCloseTo(log2p(64), within(EPS));
        assertThat(r[bb + FeatureLayout.B_REUSE_DIS_ITER]).isCloseTo(log2p(32), within(EPS));
        assertThat(r[bb + FeatureLayout.B_REUSE_DIS_BYTES]).isCloseTo(log2p(384), within(EPS));
        assertThat(r[bb + FeatureLayout.B_UNIQUE_LINES_PER_REUSE]).isCloseTo(log2p(2.0 / 64), within(EPS));
        assertThat(r[buffer(3)]).isZero(); // only three buffers

        // Curve: inner level 32 ops on 384 bytes, outer 2048 ops on 16512 bytes (in log2p scale).
        double o0 = log2p(32), o1 = log2p(2048), i0 = o0 / log2p(384), i1 = o1 / log2p(16512);
        for (int k = 0; k < 10; k++) {
            double at = o1 * (k + 1) / 10;
            double want = at <= o0 ? i0 : i0 + (i1 - i0) / (o1 - o0) * (at - o0);
            assertThat(r[FeatureLayout.CURVE + k]).as("curve %d", k).isCloseTo((float) want, within(1e-4f));
        }
        assertThat(f(r, "alloc_size")).isZero();
        assertThat(f(r, "outer_prod")).isCloseTo(log2p(2048), within(EPS));
        assertThat(f(r, "num_loops")).isCloseTo(log2p(2), within(EPS));
        assertThat(f(r, "auto_unroll_max_step")).isZero();
    }

    /**
     * A tiled matmul into a local accumulator: init and update of L make one statement (counts
     * add up), the copy-out another.
     * <pre>
     * parallel io in 0..4 { allocate L[4, 16]; pragma auto_unroll_max_step = 16 {
     *   for ii in 0..4 { for j in 0..16 { L[ii, j] = 0 } }
     *   for k in 0..8 { for ii in 0..4 { unroll j in 0..16 { L[ii, j] = L[ii, j] + A[io*4 + ii, k] * B[k, j] } } } }
     *   for ii in 0..4 { for j in 0..16 { C[io*4 + ii, j] = L[ii, j] } } }
     * </pre>
     */
    @Test
    void tiledMatmulWithLocalAccumulator() {
        Var io = new Var("io"),
                ii = new Var("ii"),
                j = new Var("j"),
                k = new Var("k"),
                ii2 = new Var("ii"),
                j2 = new Var("j"),
                ii3 = new Var("ii"),
                j3 = new Var("j");
        Buffer a = buf("A", 16, 8), b = buf("B", 8, 16), c = buf("C", 16, 16);
        Buffer l = Buffer.rowMajor("L", DType.FLOAT32, List.of(4L, 16L), MemoryScope.LOCAL);
        Expr row = io.mul(4).add(ii2);
        Stmt init = loop(ii, 4, ForKind.SERIAL, loop(j, 16, ForKind.SERIAL, store(l, FloatImm.f32(0), ii, j)));
        Stmt update = loop(
                k,
                8,
                ForKind.SERIAL,
                loop(
                        ii2,
                        4,
                        ForKind.SERIAL,
                        loop(
                                j2,
                                16,
                                ForKind.UNROLLED,
                                store(l, load(l, ii2, j2).add(load(a, row, k).mul(load(b, k, j2))), ii2, j2))));
        Stmt copy = loop(
                ii3,
                4,
                ForKind.SERIAL,
                loop(
                        j3,
                        16,
                        ForKind.SERIAL,
                        store(c, load(l, ii3, j3), io.mul(4).add(ii3), j3)));
        Stmt body = loop(
                io,
                4,
                ForKind.PARALLEL,
                new Allocate(l, Seq.of(new Pragma(Pragma.AUTO_UNROLL_MAX_STEP, 16, Seq.of(init, update)), copy)));
        ProgramFeatures pf = CPU.extract(new PrimFunc("mm", List.of(a, b, c), body));
        assertThat(pf.statements()).containsExactly("L", "C");

        float[] r = pf.row("L");
        assertThat(f(r, "float_mad")).isCloseTo(log2p(4 * 8 * 4 * 16), within(EPS));
        assertThat(f(r, "float_addsub")).isZero();
        assertThat(f(r, "float_mul")).isZero();
        // A's row index io*4 + ii: one add and one multiply per point.
        assertThat(f(r, "int_addsub")).isCloseTo(log2p(2048), within(EPS));
        assertThat(f(r, "int_mul")).isCloseTo(log2p(2048), within(EPS));
        assertThat(f(r, "unroll_num")).isCloseTo(1f, within(EPS));
        assertThat(f(r, "unroll_len")).isCloseTo(log2p(16), within(EPS));
        assertThat(f(r, "unroll_type.kPosInnerSpatial")).isEqualTo(1f);
        // io does not index L: for this statement it is not a spatial loop.
        assertThat(f(r, "parallel_type.kPosOuterReduce")).isEqualTo(1f);
        assertThat(f(r, "auto_unroll_max_step")).isCloseTo(log2p(16), within(EPS));
        assertThat(f(r, "alloc_size")).isCloseTo(log2p(64 * 4), within(EPS));
        assertThat(f(r, "alloc_prod")).isCloseTo(log2p(64 * 4), within(EPS));
        assertThat(f(r, "alloc_outer_prod")).isCloseTo(log2p(4), within(EPS));
        assertThat(f(r, "alloc_inner_prod")).isCloseTo(log2p(512), within(EPS));
        assertThat(f(r, "num_loops")).isCloseTo(log2p(4), within(EPS));
        // L (read and written) is reused across k: 8 times, after one ii loop (64 iterations) that
        // touches L 64 x 4, A 4 x 4 and B 16 x 4 bytes.
        int bl = slot(r, 2); // the read-write buffer
        assertThat(r[bl + FeatureLayout.B_REUSE_TYPE]).isEqualTo(1f);
        assertThat(r[bl + FeatureLayout.B_REUSE_CT]).isCloseTo(log2p(8), within(EPS));
        assertThat(r[bl + FeatureLayout.B_REUSE_DIS_ITER]).isCloseTo(log2p(64), within(EPS));
        assertThat(r[bl + FeatureLayout.B_REUSE_DIS_BYTES]).isCloseTo(log2p(256 + 16 + 64), within(EPS));
        assertThat(r[bl + FeatureLayout.B_UNIQUE_BYTES]).isCloseTo(log2p(256), within(EPS));

        // Kiln's inner-loop group, innermost first: j (16, unrolled, spatial), ii (4, spatial), k (8,
        // reduction), io (4, parallel; a reduction loop for L, which it does not index), no fifth.
        float[][] inner = {
            {log2p(16), 1, 0, 2}, {log2p(4), 1, 0, 0}, {log2p(8), 0, 1, 0}, {log2p(4), 0, 1, 3}, {0, 0, 0, 0}
        };
        String[] parts = {"len", "is_spatial", "is_reduce", "kind"};
        for (int lvl = 0; lvl < inner.length; lvl++) {
            for (int q = 0; q < parts.length; q++) {
                assertThat(f(r, "inner" + lvl + "." + parts[q]))
                        .as("inner%d.%s", lvl, parts[q])
                        .isCloseTo(inner[lvl][q], within(EPS));
            }
        }
        // The register tile: ii x j inside k; one k iteration touches L 256, A 16 and B 64 bytes.
        assertThat(f(r, "reg_tile")).isCloseTo(log2p(64), within(EPS));
        assertThat(f(r, "inner_reduce_len")).isCloseTo(log2p(8), within(EPS));
        assertThat(f(r, "inner_reduce_body_bytes")).isCloseTo(log2p(256 + 16 + 64), within(EPS));
        // All of it (L 256 B, A 512 B, B 512 B) fits in L1: the whole nest's 2048 mads.
        assertThat(f(r, "l1_fit_ops")).isCloseTo(log2p(2048), within(EPS));
        assertThat(f(r, "l2_fit_ops")).isCloseTo(log2p(2048), within(EPS));

        float[] rc = pf.row("C");
        assertThat(f(rc, "float_addsub")).isZero();
        // The copy-out has no reduction loop: its register tile is the whole nest, io x ii x j.
        assertThat(f(rc, "reg_tile")).isCloseTo(log2p(4 * 4 * 16), within(EPS));
        assertThat(f(rc, "inner_reduce_len")).isZero();
        assertThat(f(rc, "auto_unroll_max_step")).isZero(); // outside the pragma
        assertThat(f(rc, "alloc_size")).isZero(); // C is an argument
        // C's copy-out reads L, which the init and update also touched inside io: serial reuse is
        // only seen at io, but L's index does not use io, so the copy reuses L across io.
        int lr = slotOfRead(rc);
        assertThat(rc[lr + FeatureLayout.B_REUSE_TYPE]).isEqualTo(1f);
        assertThat(rc[lr + FeatureLayout.B_REUSE_CT]).isCloseTo(log2p(4), within(EPS));
    }

    /** Reads a transposed operand: the stride of the innermost loop is a row, each access its own line. */
    @Test
    void stridedReadAndColumnLines() {
        Var i = new Var("i"), j = new Var("j");
        Buffer a = buf("A", 24, 40), c = buf("C", 40, 24);
        Stmt body = loop(i, 40, ForKind.SERIAL, loop(j, 24, ForKind.SERIAL, store(c, load(a, j, i), i, j)));
        float[] r = CPU.extract(new PrimFunc("t", List.of(a, c), body)).row("C");
        // A is read with stride 40 elements = 160 bytes > one line: one line per access.
        int ba = buffer(0), bc = buffer(1);
        assertThat(r[ba + FeatureLayout.B_ACCESS_TYPE]).isEqualTo(1f);
        assertThat(r[ba + FeatureLayout.B_STRIDE]).isCloseTo(log2p(40), within(EPS));
        assertThat(r[ba + FeatureLayout.B_LINES]).isCloseTo(log2p(960), within(EPS));
        // C is written contiguously: 960 * 4 / 64 lines.
        assertThat(r[bc + FeatureLayout.B_LINES]).isCloseTo(log2p(60), within(EPS));
        assertThat(r[bc + FeatureLayout.B_STRIDE]).isCloseTo(log2p(1), within(EPS));
        // The outer loop i moves through A with stride 1 only: A's stride feature comes from j.
        assertThat(r[ba + FeatureLayout.B_UNIQUE_BYTES]).isCloseTo(log2p(960 * 4), within(EPS));
    }

    /** Counts by kind: an integer multiply-add, a float comparison and select, a division. */
    @Test
    void arithmeticKindsAndTypes() {
        Var i = new Var("i");
        Buffer x = Buffer.rowMajor("X", DType.INT32, List.of(10L), MemoryScope.GLOBAL);
        Buffer y = Buffer.rowMajor("Y", DType.INT32, List.of(10L), MemoryScope.GLOBAL);
        Buffer u = buf("U", 10), v = buf("V", 10);
        Stmt s1 = store(y, load(x, i).mul(IntImm.i32(3)).add(load(x, i)), i);
        Expr relu = new Select(load(u, i).gt(FloatImm.f32(0)), load(u, i).div(FloatImm.f32(2)), FloatImm.f32(0));
        Stmt s2 = store(v, relu, i);
        ProgramFeatures pf =
                CPU.extract(new PrimFunc("k", List.of(x, y, u, v), loop(i, 10, ForKind.SERIAL, Seq.of(s1, s2))));
        float[] ry = pf.row("Y"), rv = pf.row("V");
        assertThat(f(ry, "int_mad")).isCloseTo(log2p(10), within(EPS));
        assertThat(f(ry, "int_mul")).isZero();
        assertThat(f(ry, "float_mad")).isZero();
        assertThat(f(rv, "float_cmp")).isCloseTo(log2p(10), within(EPS));
        assertThat(f(rv, "float_divmod")).isCloseTo(log2p(10), within(EPS));
        assertThat(f(rv, "select_op")).isCloseTo(log2p(10), within(EPS));
        // X is read twice at the same index in Y's statement: one access, read-only.
        assertThat(ry[buffer(1) + FeatureLayout.B_BYTES]).isCloseTo(log2p(40), within(EPS));
    }

    /** GPU threads count as parallel loops and fill the thread extents. */
    @Test
    void threadBindings() {
        Var bx = new Var("bx"), tx = new Var("tx");
        Buffer a = buf("A", 256), c = buf("C", 256);
        Expr idx = bx.mul(32).add(tx);
        Stmt body = new For(
                bx,
                IntImm.i32(0),
                IntImm.i32(8),
                ForKind.THREAD_BOUND,
                ThreadAxis.BLOCK_X,
                new For(
                        tx,
                        IntImm.i32(0),
                        IntImm.i32(32),
                        ForKind.THREAD_BOUND,
                        ThreadAxis.THREAD_X,
                        store(c, load(a, idx).mul(FloatImm.f32(2)), idx)));
        float[] r = new FeatureExtractor(128, true)
                .extract(new PrimFunc("g", List.of(a, c), body))
                .row("C");
        assertThat(f(r, "is_gpu")).isEqualTo(1f);
        assertThat(f(r, "blockIdx_x_len")).isCloseTo(log2p(8), within(EPS));
        assertThat(f(r, "threadIdx_x_len")).isCloseTo(log2p(32), within(EPS));
        assertThat(f(r, "blockIdx_y_len")).isEqualTo(1f);
        assertThat(f(r, "parallel_num")).isCloseTo(log2p(2), within(EPS));
        assertThat(f(r, "parallel_prod")).isCloseTo(log2p(256), within(EPS));
        // 128-byte lines: 256 accesses * 4 bytes / 128.
        assertThat(r[buffer(0) + FeatureLayout.B_LINES]).isCloseTo(log2p(8), within(EPS));
    }

    /** A loop of one iteration is no loop; index arithmetic that cancels costs nothing. */
    @Test
    void unitLoopsAndCancellingIndices() {
        Var o = new Var("o"), i = new Var("i");
        Buffer a = buf("A", 12), c = buf("C", 12);
        Expr idx = o.floordiv(4).mul(12).add(i).sub(o.floordiv(4).mul(12)); // = i
        Stmt body = loop(o, 1, ForKind.PARALLEL, loop(i, 12, ForKind.SERIAL, store(c, load(a, idx), i)));
        float[] r = CPU.extract(new PrimFunc("u", List.of(a, c), body)).row("C");
        assertThat(f(r, "num_loops")).isCloseTo(log2p(1), within(EPS));
        assertThat(f(r, "parallel_num")).isZero();
        assertThat(f(r, "int_addsub")).isZero();
        assertThat(f(r, "int_divmod")).isZero();
        assertThat(r[buffer(1) + FeatureLayout.B_UNIQUE_BYTES]).isCloseTo(log2p(48), within(EPS));
    }

    /** The buffer block whose access type is read-write (one-hot index 2), else fails. */
    private static int slot(float[] r, int accessType) {
        for (int b = 0; b < FeatureLayout.MAX_BUFFERS; b++) {
            if (r[buffer(b) + FeatureLayout.B_ACCESS_TYPE + accessType] == 1f) return buffer(b);
        }
        throw new AssertionError("no buffer with access type " + accessType);
    }

    /** The read buffer block with the fewest unique bytes (L in the copy-out). */
    private static int slotOfRead(float[] r) {
        int best = -1;
        for (int b = 0; b < FeatureLayout.MAX_BUFFERS; b++) {
            int o = buffer(b);
            if (r[o + FeatureLayout.B_ACCESS_TYPE] == 1f
                    && (best < 0 || r[o + FeatureLayout.B_UNIQUE_BYTES] < r[best + FeatureLayout.B_UNIQUE_BYTES]))
                best = o;
        }
        return best;
    }
}
