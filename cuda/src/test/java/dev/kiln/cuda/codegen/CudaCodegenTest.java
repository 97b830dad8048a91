package dev.kiln.cuda.codegen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Cast;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Var;
import dev.kiln.lower.GpuLimits;
import dev.kiln.lower.GpuPasses;
import dev.kiln.lower.LowerDefault;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import dev.kiln.tir.ThreadAxis;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * CUDA C generation on small hand-built GPU programs: the launch configuration, the mapping of
 * bound loops, guards of shorter thread loops, shared and local arrays, vector copies, the
 * semantics-preserving forms of arithmetic, and the refusals. What compiles is checked by the
 * nvcc tests; these check what is written.
 */
class CudaCodegenTest {
    static Var v(String name) {
        return new Var(name, DType.INT32);
    }

    static IntImm c(long x) {
        return IntImm.i32(x);
    }

    static For bind(ThreadAxis axis, Var var, long extent, Stmt... body) {
        return new For(var, c(0), c(extent), ForKind.THREAD_BOUND, axis, Seq.of(body));
    }

    static For loop(ForKind kind, Var var, long extent, Stmt... body) {
        return new For(var, c(0), c(extent), kind, null, Seq.of(body));
    }

    static Buffer buf(String name, DType t, MemoryScope scope, long... shape) {
        return Buffer.rowMajor(name, t, Arrays.stream(shape).boxed().toList(), scope);
    }

    static Store store(Buffer b, Expr value, Expr... idx) {
        return new Store(b, List.of(idx), value);
    }

    static BufferLoad load(Buffer b, Expr... idx) {
        return new BufferLoad(b, List.of(idx));
    }

    static PrimFunc func(Stmt body, Buffer... params) {
        return new PrimFunc("f", List.of(params), body);
    }

    @Test
    void shorterThreadLoopsAreGuardedAndTheLaunchUsesTheLongest() {
        Buffer a = buf("A", DType.FLOAT32, MemoryScope.GLOBAL, 8, 64),
                b = buf("B", DType.FLOAT32, MemoryScope.GLOBAL, 8, 64);
        Var bx = v("bx"), t1 = v("t1"), t2 = v("t2");
        Stmt body = bind(
                ThreadAxis.BLOCK_X,
                bx,
                8,
                bind(ThreadAxis.THREAD_X, t1, 64, store(b, load(a, bx, t1), bx, t1)),
                bind(ThreadAxis.THREAD_X, t2, 48, store(b, load(a, bx, t2).add(1.0), bx, t2)));
        CudaModule m = CudaCodegen.generate(func(body, a, b));
        assertEquals(1, m.launches().size());
        Launch l = m.launches().getFirst();
        assertThat(l.grid()).containsExactly(8, 1, 1);
        assertThat(l.block()).containsExactly(64, 1, 1);
        assertThat(l.args()).containsExactly(a, b);
        assertThat(l.writes()).containsExactly(false, true);
        String src = m.source();
        assertThat(src)
                .contains("extern \"C\" __global__ void __launch_bounds__(64) f_kernel0(const float* __restrict__ A,"
                        + " float* __restrict__ B)");
        assertThat(src).contains("const int bx = (int)blockIdx.x;").contains("const int t1 = (int)threadIdx.x;");
        assertThat(src).contains("if (threadIdx.x < 48) {").doesNotContain("threadIdx.x < 64");
        assertThat(src).contains("B[(bx * 64) + t2] = (A[(bx * 64) + t2] + 1.0f);");
    }

    @Test
    void kernelsBetweenHostAllocationsBecomeLaunchesWithTemporaries() {
        Buffer a = buf("A", DType.FLOAT32, MemoryScope.GLOBAL, 100),
                tmp = buf("T", DType.FLOAT32, MemoryScope.GLOBAL, 100);
        Buffer out = buf("O", DType.FLOAT32, MemoryScope.GLOBAL, 100);
        Var b1 = v("b"), t1 = v("t"), b2 = v("b"), t2 = v("t");
        Expr i1 = b1.mul(c(25)).add(t1), i2 = b2.mul(c(25)).add(t2);
        Stmt body = new Allocate(
                tmp,
                Seq.of(
                        bind(
                                ThreadAxis.BLOCK_X,
                                b1,
                                4,
                                bind(
                                        ThreadAxis.THREAD_X,
                                        t1,
                                        25,
                                        store(tmp, load(a, i1).mul(2.0), i1))),
                        bind(
                                ThreadAxis.BLOCK_Y,
                                b2,
                                4,
                                bind(ThreadAxis.THREAD_Y, t2, 25, store(out, load(tmp, i2), i2)))));
        CudaModule m = CudaCodegen.generate(func(body, a, out));
        assertThat(m.temporaries()).containsExactly(tmp);
        assertEquals(2, m.launches().size());
        assertThat(m.launches().get(0).args()).containsExactly(a, tmp);
        assertThat(m.launches().get(1).args()).containsExactly(out, tmp);
        assertThat(m.launches().get(1).grid()).containsExactly(1, 4, 1);
        assertThat(m.launches().get(1).block()).containsExactly(1, 25, 1);
        // two variables named b and two named t get distinct C names
        assertThat(m.source())
                .contains("const int b = (int)blockIdx.x;")
                .contains("const int b_1 = (int)blockIdx.y;")
                .contains("const int t_1 = (int)threadIdx.y;");
        assertThat(m.source())
                .contains("f_kernel0(const float* __restrict__ A, float* __restrict__ T)")
                .contains("f_kernel1(float* __restrict__ O, const float* __restrict__ T)");
    }

    @Test
    void sharedAndLocalArraysAndBarriers() {
        Buffer a = buf("A", DType.FLOAT32, MemoryScope.GLOBAL, 2, 32),
                o = buf("O", DType.FLOAT32, MemoryScope.GLOBAL, 2, 32);
        Buffer sh = buf("A.shared", DType.FLOAT32, MemoryScope.SHARED, 32),
                loc = buf("acc", DType.FLOAT32, MemoryScope.LOCAL, 1);
        Var bx = v("bx"), tx = v("tx"), f = v("f"), k = v("k");
        Stmt body = bind(
                ThreadAxis.BLOCK_X,
                bx,
                2,
                new Allocate(
                        sh,
                        bind(
                                ThreadAxis.THREAD_X,
                                tx,
                                32,
                                new Allocate(
                                        loc,
                                        Seq.of(
                                                bind(ThreadAxis.THREAD_X, f, 32, store(sh, load(a, bx, f), f)),
                                                store(loc, FloatImm.f32(0), c(0)),
                                                loop(
                                                        ForKind.SERIAL,
                                                        k,
                                                        32,
                                                        store(
                                                                loc,
                                                                load(loc, c(0)).add(load(sh, k)),
                                                                c(0))),
                                                store(o, load(loc, c(0)), bx, tx))))));
        PrimFunc fn = GpuPasses.apply(func(body, a, o), GpuLimits.h200());
        String src = CudaCodegen.generate(fn).source();
        assertThat(src)
                .contains("__shared__ __align__(32) float A_shared[32];")
                .contains("float acc[1] = {};")
                .contains("__syncthreads();");
        assertThat(src.indexOf("__syncthreads();"))
                .isBetween(src.indexOf("A_shared[f] ="), src.indexOf("for (int k = 0; k < 32; ++k)"));
        String zeroed = CudaCodegen.generate(fn, CudaOptions.defaults().withZeroSharedMemory(true))
                .source();
        assertThat(zeroed)
                .contains("for (int kiln_z = (int)(threadIdx.x + 32 * (threadIdx.y + 1 * threadIdx.z)); kiln_z < 32;"
                        + " kiln_z += 32) A_shared[kiln_z] = 0.0f;");
    }

    @Test
    void alignedContiguousVectorizedCopiesBecomeFloat4() {
        Buffer a = buf("A", DType.FLOAT32, MemoryScope.GLOBAL, 256),
                o = buf("O", DType.FLOAT32, MemoryScope.GLOBAL, 256);
        Var tx = v("tx"), l = v("l"), tx2 = v("tx"), l2 = v("l");
        Expr base = tx.mul(c(4));
        Stmt aligned = bind(
                ThreadAxis.THREAD_X,
                tx,
                64,
                loop(ForKind.VECTORIZED, l, 4, store(o, load(a, base.add(l)), base.add(l))));
        String src = CudaCodegen.generate(func(aligned, a, o)).source();
        assertThat(src).contains("*(float4*)(O + (tx * 4)) = *(const float4*)(A + (tx * 4));");
        // an offset of 1 is not a multiple of 4: the copy stays scalar
        Expr off = tx2.mul(c(3)).add(c(1));
        Stmt unaligned = bind(
                ThreadAxis.THREAD_X,
                tx2,
                64,
                loop(ForKind.VECTORIZED, l2, 4, store(o, load(a, off.add(l2)), off.add(l2))));
        String s2 = CudaCodegen.generate(func(unaligned, a, o)).source();
        assertThat(s2).doesNotContain("float4").contains("#pragma unroll");
    }

    @Test
    void integerArithmeticWrapsUnlessBoundsProveItCannot() {
        Buffer x = buf("X", DType.INT32, MemoryScope.GLOBAL, 16), o = buf("O", DType.INT32, MemoryScope.GLOBAL, 16);
        Var t = v("t");
        Stmt body = bind(
                ThreadAxis.THREAD_X,
                t,
                16,
                Seq.of(
                        store(o, load(x, t).add(load(x, t)), t), // data: may overflow
                        store(o, t.mul(c(3)).add(c(7)), t), // loop arithmetic: bounded
                        store(o, new Binary(BinaryOp.FLOORDIV, load(x, t), c(4)), t), // may be negative
                        store(o, new Binary(BinaryOp.FLOORDIV, t, c(4)), t), // non-negative
                        store(o, new Binary(BinaryOp.TRUNCMOD, t, load(x, t)), t))); // divisor may be 0
        CudaModule m = CudaCodegen.generate(func(body, x, o));
        String src = m.source();
        assertThat(src).contains("O[t] = ((int)((unsigned)X[t] + (unsigned)X[t]));");
        assertThat(src).contains("O[t] = ((t * 3) + 7);");
        assertThat(src).contains("O[t] = kiln_floordiv_i32(X[t], 4);");
        assertThat(src).contains("O[t] = (t / 4);");
        assertThat(src).contains("O[t] = kiln_truncmod_i32(t, X[t]);");
        assertThat(src).contains("__device__ int kiln_error;");
        assertThat(m.usesErrorFlag()).isTrue();
    }

    @Test
    void divisionByAConstantZeroIsRefused() {
        Buffer o = buf("O", DType.INT32, MemoryScope.GLOBAL, 4);
        Var t = v("t");
        Stmt body = bind(ThreadAxis.THREAD_X, t, 4, store(o, new Binary(BinaryOp.FLOORMOD, t, c(0)), t));
        KilnException e = assertThrows(KilnException.class, () -> CudaCodegen.generate(func(body, o)));
        assertThat(e.getMessage()).contains("division by zero").contains("floormod(t, 0)");
    }

    @Test
    void exactAndFastMath() {
        Buffer x = buf("X", DType.FLOAT32, MemoryScope.GLOBAL, 8), o = buf("O", DType.FLOAT32, MemoryScope.GLOBAL, 8);
        Var t = v("t");
        Stmt body = bind(
                ThreadAxis.THREAD_X,
                t,
                8,
                store(o, dev.kiln.te.Te.exp(load(x, t)).max(load(x, t)), t));
        CudaModule exact = CudaCodegen.generate(func(body, x, o));
        assertThat(exact.source()).contains("kiln_fmax((float)(exp((double)X[t])), X[t])");
        assertThat(exact.options().compileFlags()).contains("--fmad=false");
        CudaModule fast =
                CudaCodegen.generate(func(body, x, o), CudaOptions.defaults().withFastMath(true));
        assertThat(fast.source()).contains("fmaxf(__expf(X[t]), X[t])").doesNotContain("kiln_fmax");
        assertThat(fast.options().compileFlags()).containsExactly("--use_fast_math");
    }

    @Test
    void halfAndBfloat16RoundAfterEveryOperationAndIncludeTheirHeaders() {
        Buffer h = buf("H", DType.FLOAT16, MemoryScope.GLOBAL, 8),
                bf = buf("BF", DType.BFLOAT16, MemoryScope.GLOBAL, 8);
        Var t = v("t");
        Stmt body = bind(
                ThreadAxis.THREAD_X,
                t,
                8,
                store(bf, new Cast(DType.BFLOAT16, load(h, t).mul(load(h, t))), t));
        String src = CudaCodegen.generate(func(body, h, bf)).source();
        assertThat(src).contains("#include <cuda_fp16.h>").contains("#include <cuda_bf16.h>");
        assertThat(src)
                .contains("BF[t] = __float2bfloat16_rn(__half2float(__float2half_rn(__half2float(H[t]) * "
                        + "__half2float(H[t]))));");
    }

    @Test
    void literalsDenoteTheInterpretersValues() {
        assertEquals("__int_as_float(0x7fc00000)", CudaTypes.literal(FloatImm.f32(Double.NaN)));
        assertEquals("(-__int_as_float(0x7f800000))", CudaTypes.literal(FloatImm.f32(Double.NEGATIVE_INFINITY)));
        assertEquals("(-0.0f)", CudaTypes.literal(FloatImm.f32(-0.0)));
        assertEquals("0.1f", CudaTypes.literal(FloatImm.f32(0.1)));
        assertEquals("1.0E-5", CudaTypes.literal(new FloatImm(DType.FLOAT64, 1e-5)));
        assertEquals("__ushort_as_half((unsigned short)0x3c00)", CudaTypes.literal(new FloatImm(DType.FLOAT16, 1.0)));
        assertEquals("__ushort_as_half((unsigned short)0x7c00)", CudaTypes.literal(new FloatImm(DType.FLOAT16, 1e6)));
        assertEquals(
                "__ushort_as_bfloat16((unsigned short)0x3f80)", CudaTypes.literal(new FloatImm(DType.BFLOAT16, 1.0)));
        assertEquals("(-2147483647 - 1)", CudaTypes.literal(c(Integer.MIN_VALUE)));
        assertEquals("(-9223372036854775807LL - 1)", CudaTypes.literal(IntImm.i64(Long.MIN_VALUE)));
        assertEquals("((unsigned char)200)", CudaTypes.literal(new IntImm(DType.UINT8, 200)));
    }

    @Test
    void namesAreValidDistinctCIdentifiers() {
        assertEquals("i_0_j_0", CudaNames.sanitize("i.0@j.0@"));
        assertEquals("A_shared", CudaNames.sanitize("A.shared"));
        assertEquals("v_0x", CudaNames.sanitize("0x"));
        assertEquals("v_int", CudaNames.sanitize("int"));
        assertEquals("v_threadIdx", CudaNames.sanitize("threadIdx"));
        assertEquals("v_kiln_error", CudaNames.sanitize("kiln_error"));
        assertEquals("x", CudaNames.sanitize("__x__"));
        CudaNames n = new CudaNames();
        Var a = v("k"), b = v("k");
        assertEquals("k", n.var(a));
        assertEquals("k_1", n.var(b));
        assertEquals("k", n.var(a));
    }

    @Test
    void hostCodeOtherThanAllocationsAndKernelsIsRefused() {
        dev.kiln.te.Tensor x = dev.kiln.te.Te.placeholder("x", DType.FLOAT32, 4);
        dev.kiln.te.Tensor y = dev.kiln.te.Te.compute(
                "y", dev.kiln.te.Te.shape(4), i -> x.at(i).mul(2.0));
        PrimFunc cpu = LowerDefault.lower("cpu", dev.kiln.te.ComputeDAG.of(y));
        KilnException e = assertThrows(KilnException.class, () -> CudaCodegen.generate(cpu));
        assertThat(e.getMessage())
                .contains("function 'cpu'")
                .contains("serial loop 'i'")
                .contains("host code");
        Buffer o = buf("O", DType.FLOAT32, MemoryScope.GLOBAL, 1);
        KilnException e2 =
                assertThrows(KilnException.class, () -> CudaCodegen.generate(func(store(o, FloatImm.f32(1), c(0)), o)));
        assertThat(e2.getMessage()).contains("the store to 'O'");
    }

    @Test
    void sharedMemoryInsideThreadLoopsIsRefusedUnlessTheGpuPassesPlacedIt() {
        Buffer a = buf("A", DType.FLOAT32, MemoryScope.GLOBAL, 32), o = buf("O", DType.FLOAT32, MemoryScope.GLOBAL, 32);
        Buffer sh = buf("S", DType.FLOAT32, MemoryScope.SHARED, 32);
        Var bx = v("bx"), tx = v("tx"), f = v("f");
        Stmt body = bind(
                ThreadAxis.BLOCK_X,
                bx,
                1,
                bind(
                        ThreadAxis.THREAD_X,
                        tx,
                        32,
                        new Allocate(
                                sh,
                                Seq.of(
                                        bind(ThreadAxis.THREAD_X, f, 32, store(sh, load(a, f), f)),
                                        store(o, load(sh, new Binary(BinaryOp.FLOORMOD, tx.add(c(1)), c(32))), tx)))));
        KilnException e = assertThrows(KilnException.class, () -> CudaCodegen.generate(func(body, a, o)));
        assertThat(e.getMessage())
                .contains("shared buffer 'S' is allocated inside a thread loop")
                .contains("GpuPasses.lower");
        String src = CudaCodegen.generate(GpuPasses.apply(func(body, a, o), GpuLimits.h200()))
                .source();
        assertThat(src).contains("__shared__ __align__(32) float S[32];").contains("__syncthreads();");
    }
}
