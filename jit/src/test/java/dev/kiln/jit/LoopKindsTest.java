package dev.kiln.jit;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.ThreadAxis;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Vectorized, unrolled and parallel loops built by hand in the loop IR, each matching the
 * interpreter (which runs every loop serially) and generating the code its annotation asks for.
 */
class LoopKindsTest {
    private static final DType F32 = DType.FLOAT32;

    private static Expr f(double v) {
        return FloatImm.f32(v);
    }

    private static Expr i(long v) {
        return IntImm.i32(v);
    }

    private static LlvmKernel compile(PrimFunc f) {
        return JitCheck.BACKEND.compile(f, JitCheck.TARGET);
    }

    @Test
    void contiguousVectorLoopUsesVectorLoadsAndStores() {
        Var j = new Var("j");
        Buffer a = buf("A", F32, 50), b = buf("B", F32, 50);
        PrimFunc fn = new PrimFunc(
                "vadd",
                List.of(a, b),
                loop(j, 50, ForKind.VECTORIZED, store(b, load(a, j).mul(f(3)).add(j.cast(F32)), j)));
        JitCheck.exact(fn, 1);
        try (LlvmKernel k = compile(fn)) {
            assertThat(k.generatedIr())
                    .contains("load <32 x float>") // 50 lanes: 32 + 16 + 2
                    .contains("store <16 x float>")
                    .contains("store <2 x float>")
                    .doesNotContain("<50 x float>")
                    .doesNotContain("gather");
        }
    }

    @Test
    void nonContiguousIndicesGatherAndScatter() {
        Var j = new Var("j");
        Buffer a = buf("A", F32, 64), m = buf("M", F32, 8, 8), idx = buf("I", DType.INT32, 24);
        Buffer b = buf("B", F32, 24), c = buf("C", F32, 8, 8), d = buf("D", F32, 24), e = buf("E", F32, 48);
        Stmt body = Seq.of(
                store(b, load(a, j.mul(2).add(1)), j), // stride 2
                store(c, load(m, j.floormod(8), j.floordiv(8)), j.floordiv(8), j.floormod(8)), // transpose
                store(d, load(a, load(idx, j).floormod(64)), j), // indirect
                store(e, load(a, j), j.mul(2))); // scatter with stride 2
        PrimFunc fn = new PrimFunc("gather", List.of(a, m, idx, b, c, d, e), loop(j, 24, ForKind.VECTORIZED, body));
        JitCheck.exact(fn, 2);
        try (LlvmKernel k = compile(fn)) {
            assertThat(k.generatedIr()).contains("llvm.masked.gather.v16f32").contains("llvm.masked.scatter.v8f32");
        }
    }

    @Test
    void vectorizedSelectNeverTouchesTheUnchosenBranch() {
        // padding: out[j] = j in [2, n + 2) ? A[j - 2] : 0, reading outside A in the unchosen lanes
        int n = 37;
        Var j = new Var("j");
        Buffer a = buf("A", F32, n), out = buf("Out", F32, n + 4);
        Expr inside = j.ge(2).and(j.lt(n + 2));
        PrimFunc fn = new PrimFunc(
                "pad",
                List.of(a, out),
                loop(j, n + 4, ForKind.VECTORIZED, store(out, new Select(inside, load(a, j.sub(2)), f(0)), j)));
        JitCheck.exact(fn, 3);
        try (LlvmKernel k = compile(fn)) {
            assertThat(k.generatedIr()).contains("llvm.masked.load.v32f32").contains("llvm.masked.load.v8f32");
        }
    }

    @Test
    void vectorizedConditionalStoresUnderAMask() {
        Var j = new Var("j");
        Buffer a = buf("A", F32, 70), b = buf("B", F32, 70), s = buf("S", F32, 1);
        Stmt body = Seq.of(
                new IfThenElse(load(a, j).gt(f(0)), store(b, load(a, j).mul(f(2)), j), store(b, f(-1), j)),
                // a lane-independent load under a lane mask
                IfThenElse.of(j.lt(3), store(b, load(b, j).add(load(s, i(0))), j)));
        PrimFunc fn = new PrimFunc("vif", List.of(a, s, b), loop(j, 70, ForKind.VECTORIZED, body));
        JitCheck.exact(fn, 4);
        try (LlvmKernel k = compile(fn)) {
            assertThat(k.generatedIr()).contains("llvm.masked.store.v64f32").contains("llvm.masked.store.v4f32");
        }
    }

    @Test
    void shortCircuitAndUniformConditionsGuardTheirLoads() {
        // and/or whose right side reads out of bounds where the left side decides; conditions on
        // an outer (lane-independent) loop around loads that would be out of bounds
        int n = 21;
        for (ForKind kind : List.of(ForKind.SERIAL, ForKind.VECTORIZED)) {
            Var i = new Var("i"), j = new Var("j");
            Buffer a = buf("A", F32, 4, n), out = buf("Out", DType.INT32, 4, n), o2 = buf("O2", F32, 4, n);
            Expr left = j.ge(1).and(load(a, i, j.sub(1)).gt(f(0)));
            Expr right = j.eq(n - 1).or(load(a, i, j.add(1)).lt(f(0)));
            // a zero divisor in every third column: evaluating an unchosen division would report it
            Expr div = new Select(j.floormod(3).eq(0), i(0), i.add(1));
            Stmt body = Seq.of(
                    store(out, new Select(left.and(right.not()), i(1), new Select(right, i(2), i(0))), i, j),
                    store(out, load(out, i, j).add(new Select(div.ne(0), j.floordiv(div), i(-1))), i, j),
                    store(
                            out,
                            load(out, i, j)
                                    .add(new Select(div.eq(0).or(j.floormod(div).gt(0)), i(5), i(6))),
                            i,
                            j),
                    store(o2, new Select(i.ge(1), load(a, i.sub(1), j), f(-7)), i, j),
                    IfThenElse.of(i.lt(3), store(o2, load(o2, i, j).add(load(a, i.add(1), j)), i, j)));
            PrimFunc fn = new PrimFunc(
                    "guards_" + kind.displayName(),
                    List.of(a, out, o2),
                    loop(i, 4, ForKind.SERIAL, loop(j, n, kind, body)));
            JitCheck.exact(fn, 14);
        }
    }

    @Test
    void vectorizedLoopAroundASerialReduction() {
        int n = 20, m = 33, kk = 17;
        Var i = new Var("i"), j = new Var("j"), k = new Var("k");
        Buffer a = buf("A", F32, n, kk), b = buf("B", F32, kk, m), c = buf("C", F32, n, m);
        Stmt inner = Seq.of(
                store(c, f(0), i, j),
                loop(
                        k,
                        kk,
                        ForKind.SERIAL,
                        store(c, load(c, i, j).add(load(a, i, k).mul(load(b, k, j))), i, j)));
        PrimFunc fn = new PrimFunc(
                "mmv", List.of(a, b, c), loop(i, n, ForKind.SERIAL, loop(j, m, ForKind.VECTORIZED, inner)));
        JitCheck.exact(fn, 5);
    }

    @Test
    void reductionOverTheVectorizedAxisIsGeneratedSeriallyWithANote() {
        int n = 9, kk = 40;
        Var i = new Var("i"), k = new Var("k");
        Buffer a = buf("A", F32, n, kk), c = buf("C", F32, n);
        Stmt body = Seq.of(
                store(c, f(0), i),
                loop(k, kk, ForKind.VECTORIZED, store(c, load(c, i).add(load(a, i, k)), i)));
        PrimFunc fn = new PrimFunc("vred", List.of(a, c), loop(i, n, ForKind.SERIAL, body));
        JitCheck.exact(fn, 6);
        try (LlvmKernel kern = compile(fn)) {
            assertThat(kern.notes())
                    .singleElement()
                    .asString()
                    .contains("vectorized loop 'k'")
                    .contains("serial loop")
                    .contains("'C'");
            assertThat(kern.generatedIr()).contains("; kiln: vectorized loop 'k'");
        }
    }

    @Test
    void vectorizedLetsCastsAndLongLoopsSplitIntoChunks() {
        Var j = new Var("j", DType.INT64), t = new Var("t", F32);
        Buffer a = buf("A", F32, 150), b = buf("B", F32, 150), flag = buf("Flag", DType.INT32, 1);
        Stmt body = new Let(
                t,
                load(a, j).mul(load(a, j)),
                Seq.of(
                        store(b, t.add(j.cast(F32)).sub(j.floordiv(3L).cast(F32)), j),
                        store(flag, i(7), i(0)))); // the same value from every lane
        For l = new For(j, IntImm.i64(0), IntImm.i64(150), ForKind.VECTORIZED, null, body);
        PrimFunc fn = new PrimFunc("vlet", List.of(a, b, flag), l);
        JitCheck.exact(fn, 7);
        try (LlvmKernel k = compile(fn)) {
            assertThat(k.generatedIr())
                    .contains("<64 x float>")
                    .contains("<16 x float>")
                    .contains("<4 x float>"); // 2 x 64 + 16 + 4 + 2
        }
    }

    @Test
    void unrolledLoopsAreEmittedOncePerIteration() {
        Var i = new Var("i"), j = new Var("j");
        Buffer a = buf("A", F32, 5, 7), b = buf("B", F32, 5, 7);
        For inner = new For(
                j, i(0), i(7), ForKind.UNROLLED, null, store(b, load(a, i, j).mul(f(1.5)), i, j));
        PrimFunc fn = new PrimFunc("unroll", List.of(a, b), loop(i, 5, ForKind.SERIAL, inner));
        JitCheck.exact(fn, 8);
        try (LlvmKernel k = compile(fn)) {
            long stores = k.generatedIr()
                    .lines()
                    .filter(l -> l.contains("store float"))
                    .count();
            assertThat(stores).isEqualTo(7);
        }
    }

    @Test
    void autoUnrollPragmaUnrollsSmallNests() {
        Var i = new Var("i"), j = new Var("j");
        Buffer a = buf("A", F32, 4, 4), b = buf("B", F32, 4, 4);
        Stmt nest = loop(
                i,
                4,
                ForKind.SERIAL,
                loop(j, 4, ForKind.SERIAL, store(b, load(a, j, i).mul(f(3)), i, j)));
        for (long limit : new long[] {16, 8}) {
            PrimFunc fn = new PrimFunc(
                    "auto_unroll" + limit,
                    List.of(a, b),
                    new dev.kiln.tir.Pragma(dev.kiln.tir.Pragma.AUTO_UNROLL_MAX_STEP, limit, nest));
            JitCheck.exact(fn, 15);
            try (LlvmKernel k = compile(fn)) {
                String ir = k.generatedIr();
                long loops = ir.lines().filter(l -> l.matches("loop[0-9]+:")).count();
                long stores = ir.lines().filter(l -> l.contains("store float")).count();
                // 16 steps: both loops unrolled; 8: only the inner loop (4 steps), the outer (16) stays
                assertThat(loops).isEqualTo(limit == 16 ? 0 : 1);
                assertThat(stores).isEqualTo(limit == 16 ? 16 : 4);
            }
        }
    }

    @Test
    void fpContractFusesMultiplyAdd() {
        int n = 32;
        Var i = new Var("i"), j = new Var("j"), k = new Var("k");
        Buffer a = buf("A", F32, n, n), b = buf("B", F32, n, n), c = buf("C", F32, n, n);
        Stmt body = Seq.of(
                loop(j, n, ForKind.VECTORIZED, store(c, f(0), i, j)),
                loop(
                        k,
                        n,
                        ForKind.SERIAL,
                        loop(
                                j,
                                n,
                                ForKind.VECTORIZED,
                                store(c, load(c, i, j).add(load(a, i, k).mul(load(b, k, j))), i, j))));
        PrimFunc fn = new PrimFunc("fma_mm", List.of(a, b, c), loop(i, n, ForKind.SERIAL, body));
        JitOptions contract = JitOptions.defaults().withFpContract(true);
        JitCheck.matches(fn, JitCheck.randomArgs(fn, 16), 1e-5, 1e-6, contract);
        try (LlvmKernel kc = JitCheck.BACKEND.compile(fn, JitCheck.TARGET, contract);
                LlvmKernel ke = compile(fn)) {
            assertThat(kc.optimizedIr()).contains("fmul contract <").contains("fadd contract <");
            if (JitCheck.TARGET.hasFeature("fma")) { // fused by instruction selection
                assertThat(kc.source()).contains("vfmadd");
                assertThat(ke.source()).doesNotContain("vfmadd");
            }
        }
    }

    /**
     * A row sum over a scalar loop: on a fast-math target its add is reassociable and LLVM keeps vector partial sums
     * (before, 128 dependent {@code vaddss} a row in the attention workload's softmax); on a default target it stays
     * the in-order chain and equals the interpreter bit for bit.
     */
    @Test
    void aScalarSumIsVectorizedOnlyOnAFastMathTarget() {
        int rows = 6, n = 128;
        Var i = new Var("i"), j = new Var("j");
        Buffer a = buf("A", F32, rows, n), s = buf("S", F32, rows);
        Stmt row = Seq.of(
                store(s, f(0), i),
                loop(j, n, ForKind.SERIAL, store(s, load(s, i).add(load(a, i, j)), i)));
        PrimFunc fn = new PrimFunc("rowsum", List.of(a, s), loop(i, rows, ForKind.SERIAL, row));
        JitOptions contract = JitOptions.defaults().withFpContract(true);
        JitCheck.matches(fn, JitCheck.randomArgs(fn, 21), 1e-5, 1e-6, contract);
        JitCheck.exact(fn, 21);
        try (LlvmKernel fast = JitCheck.BACKEND.compile(fn, JitCheck.TARGET, contract);
                LlvmKernel exact = compile(fn)) {
            assertThat(fast.optimizedIr())
                    .contains("fadd reassoc")
                    .containsPattern("fadd reassoc contract <\\d+ x float>");
            assertThat(exact.optimizedIr())
                    .doesNotContain("reassoc")
                    .doesNotContainPattern("fadd[a-z ]* <\\d+ x float>");
        }
    }

    /**
     * A row divided by its sum (softmax's normalisation): on a fast-math target the divide may use the reciprocal, so
     * LLVM divides once per row outside the vectorized loop and multiplies in it (before, one {@code vdivps} per 16
     * floats: a tenth of SFM 1024's time); on a default target every element is divided, bit for bit as the
     * interpreter does.
     */
    @Test
    void aDivideByALoopInvariantIsOneReciprocalOnlyOnAFastMathTarget() {
        int rows = 5, n = 256;
        Var i = new Var("i"), j = new Var("j");
        Buffer a = buf("A", F32, rows, n), s = buf("S", F32, rows), b = buf("B", F32, rows, n);
        Stmt body = loop(j, n, ForKind.VECTORIZED, store(b, load(a, i, j).div(load(s, i)), i, j));
        PrimFunc fn = new PrimFunc("rowdiv", List.of(a, s, b), loop(i, rows, ForKind.SERIAL, body));
        JitOptions contract = JitOptions.defaults().withFpContract(true);
        JitCheck.matches(fn, JitCheck.randomArgs(fn, 23), 1e-6, 1e-6, contract);
        JitCheck.exact(fn, 23);
        try (LlvmKernel fast = JitCheck.BACKEND.compile(fn, JitCheck.TARGET, contract);
                LlvmKernel exact = compile(fn)) {
            // fast: every divide is a reciprocal (1.0 over the sum, once a row), the elements are multiplied
            assertThat(fast.optimizedIr())
                    .containsPattern("fdiv arcp contract (float|<\\d+ x float>) <?float 1\\.0+e\\+00")
                    .containsPattern("fmul arcp contract <\\d+ x float>")
                    .doesNotContainPattern("fdiv[a-z ]* (float|<\\d+ x float>) %");
            assertThat(exact.optimizedIr()).doesNotContain("arcp").containsPattern("fdiv <\\d+ x float> %");
        }
    }

    /**
     * Vector float min and max keep the interpreter's semantics exactly: a NaN operand gives NaN, -0 is below +0, the
     * infinities order as numbers (float32 in 16, 32 and 64 lanes, float64). x86 lowers them to {@code vmaxps} plus a
     * NaN test and a blend; AVX-512 DQ's {@code vrangeps}, one instruction, was tried and fails this test: it returns
     * the other operand for a NaN (max(NaN, -0) gave -0).
     */
    @Test
    void vectorMinAndMaxAreExactOnNaNsZerosAndInfinities() {
        double[] special = {
            Double.NaN, -0.0, 0.0, 1.5, -1.5, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 3e-39, -7.25, 2.0
        };
        int n = special.length * special.length; // every ordered pair
        for (DType t : List.of(F32, DType.FLOAT64)) {
            for (int lanes : t == F32 ? new int[] {16, 32, 64} : new int[] {8, 16}) {
                int len = ((n + lanes - 1) / lanes) * lanes;
                Var i = new Var("i");
                Buffer a = buf("A", t, len), b = buf("B", t, len), mx = buf("MX", t, len), mn = buf("MN", t, len);
                Stmt body = Seq.of(
                        store(mx, load(a, i).max(load(b, i)), i),
                        store(mn, load(a, i).min(load(b, i)), i));
                Var o = new Var("o");
                Stmt inner = new For(i, o.mul(lanes), i(lanes), ForKind.VECTORIZED, null, body);
                PrimFunc fn = new PrimFunc(
                        "minmax" + lanes + t, List.of(a, b, mx, mn), loop(o, len / lanes, ForKind.SERIAL, inner));
                try (LlvmKernel k = JitCheck.BACKEND.compile(fn, JitCheck.TARGET, JitOptions.defaults());
                        dev.kiln.runtime.NDArray va = dev.kiln.runtime.NDArray.allocate(a);
                        dev.kiln.runtime.NDArray vb = dev.kiln.runtime.NDArray.allocate(b);
                        dev.kiln.runtime.NDArray vmx = dev.kiln.runtime.NDArray.allocate(mx);
                        dev.kiln.runtime.NDArray vmn = dev.kiln.runtime.NDArray.allocate(mn)) {
                    for (int p = 0; p < len; p++) {
                        va.setDoubleFlat(special[(p / special.length) % special.length], p);
                        vb.setDoubleFlat(special[p % special.length], p);
                    }
                    k.call(va, vb, vmx, vmn);
                    for (int p = 0; p < len; p++) {
                        double x = va.getDoubleFlat(p), y = vb.getDoubleFlat(p);
                        double wantMax = t == F32 ? Math.max((float) x, (float) y) : Math.max(x, y);
                        double wantMin = t == F32 ? Math.min((float) x, (float) y) : Math.min(x, y);
                        assertThat(Double.doubleToLongBits(vmx.getDoubleFlat(p)))
                                .as("%s max(%s, %s) in %d lanes", t, x, y, lanes)
                                .isEqualTo(Double.doubleToLongBits(wantMax));
                        assertThat(Double.doubleToLongBits(vmn.getDoubleFlat(p)))
                                .as("%s min(%s, %s) in %d lanes", t, x, y, lanes)
                                .isEqualTo(Double.doubleToLongBits(wantMin));
                    }
                }
            }
        }
    }

    @Test
    void loopsWithNonZeroMinAndUnrolledOrVectorizedInsideVectorLoops() {
        Var i = new Var("i"), j = new Var("j"), u = new Var("u");
        Buffer a = buf("A", F32, 12, 16), b = buf("B", F32, 12, 16);
        Stmt body = new For(
                u,
                i(0),
                i(3),
                ForKind.UNROLLED,
                null,
                store(b, load(a, i.add(u.mul(4)), j).add(u.cast(F32)), i.add(u.mul(4)), j));
        For vj = new For(j, i(0), i(16), ForKind.VECTORIZED, null, body);
        For oi = new For(i, i(1), i(3), ForKind.SERIAL, null, vj); // i in [1, 4)
        JitCheck.exact(new PrimFunc("minloops", List.of(a, b), oi), 9);
    }

    private static PrimFunc parallelMatmul(int n) {
        Var i = new Var("i"), j = new Var("j"), k = new Var("k");
        Buffer a = buf("A", F32, n, n), b = buf("B", F32, n, n), c = buf("C", F32, n, n);
        Stmt inner = Seq.of(
                store(c, f(0), i, j),
                loop(
                        k,
                        n,
                        ForKind.SERIAL,
                        store(c, load(c, i, j).add(load(a, i, k).mul(load(b, k, j))), i, j)));
        return new PrimFunc(
                "pmm" + n, List.of(a, b, c), loop(i, n, ForKind.PARALLEL, loop(j, n, ForKind.VECTORIZED, inner)));
    }

    @Test
    void parallelLoopsOnBothRuntimes() {
        for (ParallelRuntime r : ParallelRuntime.values()) {
            JitOptions o = JitOptions.defaults().withRuntime(r);
            PrimFunc mm = parallelMatmul(48); // 48 x 48 x 48: above the serial threshold
            JitCheck.matches(mm, JitCheck.randomArgs(mm, 10), 0, 0, o);
            PrimFunc tiny = parallelMatmul(3); // below it: runs on the calling thread
            JitCheck.matches(tiny, JitCheck.randomArgs(tiny, 11), 0, 0, o);
        }
        try (LlvmKernel k = compile(parallelMatmul(48))) {
            assertThat(k.generatedIr()).contains("call i32 @kiln_rt_").contains("_par0_impl(ptr noalias align 64");
        }
    }

    @Test
    void parallelLoopInsideASerialLoopWithCapturedValuesAndAllocations() {
        // for t in 0..3 (serial): let s = t * 2.5; parallel for i: allocate T[40]; T[x] = ...; Out[t, i] = sum T
        int n = 50, w = 40;
        Var t = new Var("t"), i = new Var("i"), x = new Var("x"), y = new Var("y"), s = new Var("s", F32);
        Buffer a = buf("A", F32, n, w), out = buf("Out", F32, 3, n), tmp = buf("T", F32, w);
        Stmt fill = loop(x, w, ForKind.VECTORIZED, store(tmp, load(a, i, x).mul(s), x));
        Stmt sum = Seq.of(
                store(out, f(0), t, i),
                loop(y, w, ForKind.SERIAL, store(out, load(out, t, i).add(load(tmp, y)), t, i)));
        Stmt par = loop(i, n, ForKind.PARALLEL, new dev.kiln.tir.Allocate(tmp, Seq.of(fill, sum)));
        PrimFunc fn = new PrimFunc(
                "pcap",
                List.of(a, out),
                loop(t, 3, ForKind.SERIAL, new Let(s, t.cast(F32).mul(f(2.5)), par)));
        for (ParallelRuntime r : ParallelRuntime.values()) {
            JitCheck.matches(
                    fn, JitCheck.randomArgs(fn, 12), 0, 0, JitOptions.defaults().withRuntime(r));
        }
    }

    @Test
    void largeAllocationsLiveOnTheHeap() {
        int n = 80; // 80 x 80 float32 = 25 KiB > the stack limit
        Var i = new Var("i"), j = new Var("j");
        Buffer a = buf("A", F32, n, n), b = buf("B", F32, n, n), tmp = buf("T", F32, n, n);
        Stmt body = Seq.of(
                loop(i, n, ForKind.SERIAL, loop(j, n, ForKind.VECTORIZED, store(tmp, load(a, j, i), i, j))),
                loop(
                        i,
                        n,
                        ForKind.PARALLEL,
                        loop(j, n, ForKind.SERIAL, store(b, load(tmp, i, j).mul(f(2)), i, j))));
        PrimFunc fn = new PrimFunc("heap", List.of(a, b), new dev.kiln.tir.Allocate(tmp, body));
        JitCheck.exact(fn, 13);
        try (LlvmKernel k = compile(fn)) {
            assertThat(k.generatedIr()).contains("@kiln_rt_alloc(i64 25600)").contains("@kiln_rt_free(ptr");
        }
    }

    @Test
    void unsupportedLoopNestsFailWithClearMessages() {
        Var i = new Var("i"), j = new Var("j"), n = new Var("n");
        Buffer a = buf("A", F32, 8, 8);
        Stmt st = store(a, f(1), i, j);
        assertThrows(
                KilnException.class,
                () -> compile(new PrimFunc(
                        "nest", List.of(a), loop(i, 8, ForKind.PARALLEL, loop(j, 8, ForKind.PARALLEL, st)))),
                "nested parallel");
        KilnException e = assertThrows(
                KilnException.class,
                () -> compile(new PrimFunc(
                        "nest", List.of(a), loop(i, 8, ForKind.PARALLEL, loop(j, 8, ForKind.PARALLEL, st)))));
        assertThat(e.getMessage())
                .contains("'nest'")
                .contains("parallel loop 'j'")
                .contains("nested");
        e = assertThrows(
                KilnException.class,
                () -> compile(new PrimFunc(
                        "gpu",
                        List.of(a),
                        new For(
                                i,
                                i(0),
                                i(8),
                                ForKind.THREAD_BOUND,
                                ThreadAxis.THREAD_X,
                                loop(j, 8, ForKind.SERIAL, st)))));
        assertThat(e.getMessage())
                .contains("'gpu'")
                .contains("loop 'i'")
                .contains("threadIdx.x")
                .contains("CPU");
        e = assertThrows(
                KilnException.class,
                () -> compile(new PrimFunc(
                        "pinv", List.of(a), loop(i, 8, ForKind.VECTORIZED, loop(j, 8, ForKind.PARALLEL, st)))));
        assertThat(e.getMessage()).contains("loop 'j'").contains("vectorized loop");
        Stmt symbolic = new Let(n, i(8), new For(j, i(0), n, ForKind.VECTORIZED, null, store(a, f(1), i(0), j)));
        e = assertThrows(KilnException.class, () -> compile(new PrimFunc("sym", List.of(a), symbolic)));
        assertThat(e.getMessage()).contains("vectorized loop 'j'").contains("constant extent");
        Stmt unroll = new Let(n, i(8), new For(j, i(0), n, ForKind.UNROLLED, null, store(a, f(1), i(0), j)));
        e = assertThrows(KilnException.class, () -> compile(new PrimFunc("symu", List.of(a), unroll)));
        assertThat(e.getMessage()).contains("unrolled loop 'j'").contains("constant extent");
    }
}
