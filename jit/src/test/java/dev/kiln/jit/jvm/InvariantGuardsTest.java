package dev.kiln.jit.jvm;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Conv;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * {@link InvariantGuards}: a select whose guard does not change in a register-promoted serial loop is
 * read branch-free there (mask and safe address hoisted) and gives the interpreter's bits, NaN, infinity
 * and padding included; a guard that does change, or an address that could leave the buffer, is left as
 * a branch.
 */
class InvariantGuardsTest {
    private static final DType F32 = DType.FLOAT32;
    private static final int W = Math.max(2, Math.min(16, JvmCheck.TARGET.vectorBits() / 32));
    private static final String MASKED = "IntVector.and";
    private static final String SCALAR_MASKED = "Float.floatToRawIntBits";

    /** BackendsBench's register-tiled conv, small: 4 pixels x 2 vectors of output channels, (rh, rw, rc) outside. */
    private static PrimFunc registerTiledConv(int h, int w, int ci) {
        Tensor data = Te.placeholder("data", F32, 1, h, w, ci), weight = Te.placeholder("weight", F32, 3, 3, ci, 2 * W);
        ScheduleBuilder b = ScheduleBuilder.on(ComputeDAG.of(Conv.conv2dNhwc(data, weight, 1, 1)));
        b.stage("pad").computeInline();
        var conv = b.stage(b.state().dag().outputs().get(0));
        var loops = conv.loops();
        var ws = conv.split(loops.get(2), 4);
        conv.reorder(
                loops.get(0),
                loops.get(1),
                ws.get(0),
                loops.get(4),
                loops.get(5),
                loops.get(6),
                ws.get(1),
                loops.get(3));
        conv.parallel(conv.fuse(loops.get(0), loops.get(1)));
        conv.unroll(ws.get(1));
        conv.vectorize(loops.get(3));
        return Lowering.lower("conv", b.build());
    }

    @Test
    void thePaddedConvReadsItsInputBranchFreeAndExactly() {
        PrimFunc f = registerTiledConv(5, 8, 7);
        JvmKernel k = JvmCheck.exact(f, 21);
        assertThat(k.promotions()).isNotEmpty();
        // four pixels per step of rc, each its own guard (the border pixels test the width too)
        assertThat(count(k.source(), MASKED)).isEqualTo(4);
        JvmBackend.clearCache();
        System.setProperty("kiln.jvm.vectorGuardMask", "false");
        try {
            // the broadcast masked as a scalar before it is broadcast: also exact
            assertThat(count(JvmCheck.exact(f, 21).source(), SCALAR_MASKED)).isEqualTo(4);
        } finally {
            System.clearProperty("kiln.jvm.vectorGuardMask");
            JvmBackend.clearCache();
        }
        System.setProperty("kiln.jvm.hoistGuards", "false");
        try {
            String plain = JvmCheck.exact(f, 21).source();
            assertThat(count(plain, MASKED) + count(plain, SCALAR_MASKED)).isZero();
        } finally {
            System.clearProperty("kiln.jvm.hoistGuards");
            JvmBackend.clearCache();
        }
    }

    @Test
    void nanAndInfinityPassThroughTheMaskAsTheSelectWouldGiveThem() {
        PrimFunc f = registerTiledConv(4, 4, 3);
        List<NDArray> args = JvmCheck.randomArgs(f, 22);
        try {
            SplittableRandom r = new SplittableRandom(22);
            float[] special = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, -0.0f};
            for (int n = 0; n < 6; n++) {
                long i = r.nextLong(args.get(0).numElements()),
                        j = r.nextLong(args.get(1).numElements());
                args.get(0).setDoubleFlat(special[r.nextInt(special.length)], i);
                args.get(1).setDoubleFlat(special[r.nextInt(special.length)], j);
            }
            JvmKernel k = JvmCheck.matches(f, args, 0, 0);
            assertThat(count(k.source(), MASKED)).isEqualTo(4);
        } finally {
            for (NDArray a : args) a.close();
        }
    }

    /**
     * {@code for o: for k (promoted): vectorized j: c[o, j] += select(guard(o), a[start - k - o], 1.5f) * e[k, j]}:
     * a falling address and a non-zero false value.
     */
    private static PrimFunc falling(BiFunction<Var, Var, Expr> guard, int aLen) {
        Var o = new Var("o"), kk = new Var("k"), j = new Var("j"), j0 = new Var("j0");
        int n = 2 * W, k = 5, outer = 4;
        Buffer a = buf("a", F32, aLen), e = buf("e", F32, k, n), c = buf("c", F32, outer, n);
        Expr pick = new Select(
                guard.apply(o, kk),
                load(a, new dev.kiln.ir.IntImm(DType.INT32, aLen - 1).sub(kk).sub(o)),
                FloatImm.f32(1.5));
        Stmt body = loop(j, n, ForKind.VECTORIZED, store(c, load(c, o, j).add(pick.mul(load(e, kk, j))), o, j));
        Stmt init = loop(j0, n, ForKind.VECTORIZED, store(c, FloatImm.f32(0), o, j0));
        Stmt s = loop(o, outer, ForKind.SERIAL, Seq.of(init, loop(kk, k, ForKind.SERIAL, body)));
        return new PrimFunc("falling", List.of(a, e, c), s);
    }

    @Test
    void aFallingAddressAndANonZeroFalseValueAreExact() {
        JvmKernel k = JvmCheck.exact(falling((o, kk) -> o.ge(1).and(o.lt(3)), 8), 23);
        assertThat(k.promotions()).isNotEmpty();
        assertThat(count(k.source(), MASKED)).isEqualTo(1);
    }

    @Test
    void aGuardThatChangesInTheLoopStaysABranch() {
        JvmKernel k = JvmCheck.exact(falling((o, kk) -> kk.ge(2).and(o.ge(1)), 8), 24);
        assertThat(count(k.source(), MASKED)).isZero();
    }

    @Test
    void theSafeAddressStaysInsideTheBuffer() {
        // the guard never holds, so only the safe address is read: 5 steps of k need 5 elements of a
        assertThat(count(JvmCheck.exact(falling((o, kk) -> o.ge(10), 5), 25).source(), MASKED))
                .isEqualTo(1);
        assertThat(count(JvmCheck.exact(falling((o, kk) -> o.ge(10), 4), 26).source(), MASKED))
                .isZero();
    }

    private static int count(String s, String what) {
        return s.split(java.util.regex.Pattern.quote(what), -1).length - 1;
    }
}
