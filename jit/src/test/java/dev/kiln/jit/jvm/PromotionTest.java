package dev.kiln.jit.jvm;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.i32;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.CompareOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Var;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Conv;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Register promotion of vector accumulators ({@link Promotion}): where it applies, the kernel keeps
 * the accumulators in locals and still matches the interpreter bit for bit; where it would not be
 * exact (partly overlapping vectors, a masked tail, a conditional, a scalar access, an address that
 * changes in the loop) it is refused and the kernel matches too.
 */
class PromotionTest {
    private static final DType F32 = DType.FLOAT32;
    /** Lanes of a float32 chunk on this machine (at least 2). */
    private static final int W = Math.max(2, Math.min(16, JvmCheck.TARGET.vectorBits() / 32));

    /**
     * {@code for i: (c[rows*i + r, j] = 0 for each r); for k: for each r: vectorized j: c[rows*i + r, off_r + j] +=
     * a[rows*i + r, k] * b[k, j]}, c being {@code cols} wide.
     */
    private static PrimFunc accumulate(
            String name, int n, int cols, long[] offs, int k, java.util.function.Function<Buffer, Stmt> extra) {
        int rows = offs.length, r = 2 * rows;
        Var i = new Var("i"), kk = new Var("k"), j = new Var("j"), j0 = new Var("j0");
        Buffer a = buf("a", F32, r, Math.max(1, k)),
                b = buf("b", F32, Math.max(1, k), cols),
                c = buf("c", F32, r, cols);
        Stmt[] init = new Stmt[rows], body = new Stmt[rows];
        for (int q = 0; q < rows; q++) {
            Expr row = i.mul(rows).add(q), col = j.add(offs[q]), col0 = j0.add(offs[q]);
            init[q] = loop(j0, n, ForKind.VECTORIZED, store(c, FloatImm.f32(0), row, col0));
            body[q] = loop(
                    j,
                    n,
                    ForKind.VECTORIZED,
                    store(c, load(c, row, col).add(load(a, row, kk).mul(load(b, kk, j))), row, col));
        }
        Stmt inner = extra == null ? Seq.of(body) : Seq.of(Seq.of(body), extra.apply(c));
        Stmt f = loop(i, 2, ForKind.SERIAL, Seq.of(Seq.of(init), loop(kk, k, ForKind.SERIAL, inner)));
        return new PrimFunc(name, List.of(a, b, c), f);
    }

    @Test
    void aRegisterTileOfAccumulatorsIsKeptInLocalsAcrossTheReductionLoop() {
        // 3 rows of 3 chunks, rows cols apart, and a second program with rows at chunk-aligned offsets of one row
        PrimFunc rows = accumulate("tile", 3 * W, 3 * W, new long[] {0, 0, 0}, 7, null);
        JvmKernel k = JvmCheck.exact(rows, 1);
        assertThat(k.promotions()).containsExactly("loop 'k' keeps 9 vector(s) of 'c' in locals");
        PrimFunc aligned = accumulate("aligned", W, 4 * W, new long[] {0, W, 3 * W}, 5, null);
        assertThat(JvmCheck.exact(aligned, 2).promotions())
                .containsExactly("loop 'k' keeps 3 vector(s) of 'c' in locals");
    }

    @Test
    void aLoopOfZeroIterationsLeavesMemoryAlone() {
        PrimFunc f = accumulate("empty", 2 * W, 2 * W, new long[] {0, 0}, 0, null);
        JvmCheck.exact(f, 3);
    }

    @Test
    void partlyOverlappingVectorsStayInMemory() {
        // chunks one element apart would be two locals for overlapping memory
        PrimFunc f = accumulate("overlap", 2 * W, 2 * W + 1, new long[] {0, 1}, 4, null);
        assertThat(JvmCheck.exact(f, 4).promotions()).isEmpty();
    }

    @Test
    void aMaskedTailStaysInMemory() {
        PrimFunc f = accumulate("tail", W + 1, W + 1, new long[] {0}, 4, null);
        assertThat(JvmCheck.exact(f, 5).promotions()).isEmpty();
    }

    @Test
    void aScalarOrConditionalAccessKeepsTheBufferInMemory() {
        // a scalar store into the accumulator inside the loop
        java.util.function.Function<Buffer, Stmt> scalar =
                c -> store(c, load(c, i32(0), i32(0)).mul(FloatImm.f32(0.5f)), i32(0), i32(0));
        PrimFunc f = accumulate("scalar", 2 * W, 2 * W, new long[] {0, 0}, 4, scalar);
        assertThat(JvmCheck.exact(f, 6).promotions()).isEmpty();
        // a conditional around one of the vector loops
        PrimFunc g = accumulate("cond", 2 * W, 2 * W, new long[] {0, 0}, 4, null);
        PrimFunc guarded = new PrimFunc(
                "cond",
                g.params(),
                new dev.kiln.tir.StmtRewriter() {
                    @Override
                    public Stmt visit(Stmt s) {
                        if (s instanceof dev.kiln.tir.For f2 && f2.var().name().equals("k")) {
                            Stmt body = new IfThenElse(
                                    new dev.kiln.ir.Compare(CompareOp.LT, f2.var(), i32(2)), f2.body(), null);
                            return new dev.kiln.tir.For(f2.var(), f2.min(), f2.extent(), f2.kind(), null, body);
                        }
                        return super.visit(s);
                    }
                }.visit(g.body()));
        assertThat(JvmCheck.exact(guarded, 7).promotions()).isEmpty();
    }

    @Test
    void anAddressThatChangesInTheLoopStaysInMemory() {
        Var kk = new Var("k"), j = new Var("j");
        Buffer a = buf("a", F32, 6, 2 * W), c = buf("c", F32, 6, 2 * W);
        PrimFunc f = new PrimFunc(
                "moving",
                List.of(a, c),
                loop(
                        kk,
                        6,
                        ForKind.SERIAL,
                        loop(
                                j,
                                2 * W,
                                ForKind.VECTORIZED,
                                store(c, load(c, kk, j).add(load(a, kk, j)), kk, j))));
        assertThat(JvmCheck.exact(f, 8).promotions()).isEmpty();
    }

    @Test
    void loadsAreReusedWithinAnIterationOnlyFromBuffersItDoesNotStoreTo() {
        // for k: c[j] += a[k] * e[k, j]; e[k, j] = e[k, j] * 2; d[j] += a[k] * e[k, j] (must see the new e)
        Var kk = new Var("k"), j1 = new Var("j1"), j2 = new Var("j2"), j3 = new Var("j3");
        int n = 2 * W, k = 5;
        Buffer a = buf("a", F32, k), e = buf("e", F32, k, n), c = buf("c", F32, n), d = buf("d", F32, n);
        Stmt body = Seq.of(
                loop(
                        j1,
                        n,
                        ForKind.VECTORIZED,
                        store(c, load(c, j1).add(load(a, kk).mul(load(e, kk, j1))), j1)),
                loop(j2, n, ForKind.VECTORIZED, store(e, load(e, kk, j2).mul(FloatImm.f32(2)), kk, j2)),
                loop(
                        j3,
                        n,
                        ForKind.VECTORIZED,
                        store(d, load(d, j3).add(load(a, kk).mul(load(e, kk, j3))), j3)));
        PrimFunc f = new PrimFunc("reuse", List.of(a, e, c, d), loop(kk, k, ForKind.SERIAL, body));
        JvmKernel kern = JvmCheck.exact(f, 11);
        assertThat(kern.promotions())
                .containsExactlyInAnyOrder(
                        "loop 'k' keeps 2 vector(s) of 'c' in locals", "loop 'k' keeps 2 vector(s) of 'd' in locals");
    }

    @Test
    void theTiledMatmulKernelLoadsEachOperandOncePerStepOfK() {
        PrimFunc f = tiledMatmul(64);
        String reused = JvmCheck.exact(f, 12).source();
        String fresh;
        System.setProperty("kiln.jvm.reuseLoads", "false");
        try {
            JvmBackend.clearCache();
            fresh = JvmCheck.exact(f, 12).source();
        } finally {
            System.clearProperty("kiln.jvm.reuseLoads");
            JvmBackend.clearCache();
        }
        // 4 rows x 2 chunks: 8 loads of B and 8 broadcasts of A without reuse, 2 and 4 with it
        assertThat(count(fresh, "FloatVector.broadcast") - count(reused, "FloatVector.broadcast"))
                .isEqualTo(4);
        assertThat(count(fresh, "FloatVector.fromMemorySegment") - count(reused, "FloatVector.fromMemorySegment"))
                .isEqualTo(6);
    }

    private static int count(String s, String what) {
        return s.split(java.util.regex.Pattern.quote(what), -1).length - 1;
    }

    /** The tiled matmul schedule (8 x 32 tiles, 4 x 2W register blocks, k in steps of 16) for n x n. */
    private static PrimFunc tiledMatmul(int n) {
        Tensor x = Te.placeholder("A", F32, n, n), y = Te.placeholder("B", F32, n, n);
        IterVar k = Te.reduceAxis(n, "k");
        ComputeDAG dag = ComputeDAG.of(
                Te.compute("C", Te.shape(n, n), (i, jj) -> Te.sum(k, x.at(i, k).mul(y.at(k, jj)))));
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("C");
        var local = c.cacheWrite("local");
        c.split("i", 8);
        c.split("j", 32);
        c.reorder("i.0", "j.0", "i.1", "j.1");
        local.computeAt(c, "j.0");
        c.parallel(c.fuse("i.0", "j.0"));
        c.vectorize("j.1");
        local.split("i", 4);
        local.split("j", 2 * W);
        local.split("k", 16);
        local.reorder("k.0", "i.0", "j.0", "k.1", "i.1", "j.1");
        local.unroll("i.1");
        local.vectorize("j.1");
        return Lowering.lower("tiled", s.build());
    }

    @Test
    void theTiledMatmulScheduleKeepsItsRegisterTileInLocals() {
        JvmKernel kern = JvmCheck.exact(tiledMatmul(64), 9);
        assertThat(kern.promotions()).containsExactly("loop 'k.1' keeps 8 vector(s) of 'C.local' in locals");
    }

    @Test
    void theDirectConvolutionKeepsItsOutputVectorsInLocalsAcrossTheChannels() {
        int co = 2 * W;
        Tensor data = Te.placeholder("data", F32, 1, 5, 6, 3), weight = Te.placeholder("weight", F32, 3, 3, 3, co);
        ComputeDAG dag = ComputeDAG.of(Conv.conv2dNhwc(data, weight, 1, 1));
        ScheduleBuilder b = ScheduleBuilder.on(dag);
        b.stage("pad").computeInline();
        var conv = b.stage(dag.outputs().get(0));
        var loops = conv.loops();
        conv.reorder(loops.get(0), loops.get(1), loops.get(2), loops.get(4), loops.get(5), loops.get(6), loops.get(3));
        conv.parallel(loops.get(1));
        conv.vectorize(loops.get(3));
        PrimFunc f = Lowering.lower("conv", b.build());
        JvmKernel kern = JvmCheck.exact(f, 10);
        assertThat(kern.promotions()).isNotEmpty();
    }
}
