package dev.kiln.jit;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The kernel handle: argument checks before native code, error reports, the compile cache, the SPI. */
class KernelHandleTest {
    private static PrimFunc addFunc(String name, int n) {
        Tensor a = Te.placeholder("A", DType.FLOAT32, n, 3);
        Tensor b = Te.placeholder("B", DType.FLOAT32, n, 3);
        Tensor c = Te.compute("C", Te.shape(n, 3), (i, j) -> a.at(i, j).add(b.at(i, j)));
        return LowerDefault.lower(name, List.of(a, b, c));
    }

    @Test
    void everyArgumentIsCheckedBeforeNativeCode() {
        PrimFunc f = addFunc("add", 4);
        try (LlvmKernel k = JitCheck.BACKEND.compile(f, JitCheck.TARGET);
                NDArray a = NDArray.random(DType.FLOAT32, 1, 4, 3);
                NDArray b = NDArray.random(DType.FLOAT32, 2, 4, 3);
                NDArray c = NDArray.allocate(DType.FLOAT32, 4, 3);
                NDArray wrongType = NDArray.allocate(DType.FLOAT64, 4, 3);
                NDArray wrongShape = NDArray.allocate(DType.FLOAT32, 3, 4);
                NDArray wrongStrides = NDArray.allocateStrided(DType.FLOAT32, new long[] {4, 3}, new long[] {1, 4});
                Arena arena = Arena.ofConfined()) {
            assertThat(msg(() -> k.call(a, b))).contains("kernel 'add' takes 3 argument(s) [A, B, C], got 2");
            assertThat(msg(() -> k.call(a, null, c))).contains("argument 1 (parameter 'B') is null");
            assertThat(msg(() -> k.call(a, wrongType, c)))
                    .contains("argument 1 (parameter 'B') has dtype float64, expected float32");
            assertThat(msg(() -> k.call(a, b, wrongShape)))
                    .contains("argument 2 (parameter 'C') has shape [3, 4], expected [4, 3]");
            assertThat(msg(() -> k.call(wrongStrides, b, c)))
                    .contains("argument 0 (parameter 'A') has strides [1, 4]")
                    .contains("compiled for strides [3, 1]");
            assertThat(msg(() -> k.call(a, b, a)))
                    .contains("argument 2 (parameter 'C') overlaps argument 0 (parameter 'A')");
            MemorySegment raw = arena.allocate(4 * 12 + 64, 64).asSlice(4);
            NDArray unaligned = NDArray.wrap(raw, DType.FLOAT32, new long[] {4, 3}, new long[] {3, 1});
            assertThat(msg(() -> k.call(a, b, unaligned)))
                    .contains("argument 2 (parameter 'C') is not 64-byte aligned");
            NDArray closed = NDArray.allocate(DType.FLOAT32, 4, 3);
            closed.close();
            assertThat(msg(() -> k.call(a, b, closed))).contains("argument 2 (parameter 'C') is closed");
            // inputs may alias each other: nothing writes them
            k.call(a, a, c);
            assertEquals(2 * a.getDouble(3, 2), c.getDouble(3, 2), 1e-6);
        }
    }

    @Test
    void concurrentCallsOfParallelAndSerialKernelsAreCorrect() throws Exception {
        PrimFunc par = ParallelRuntimeBenchmark.matmul(64, ForKind.PARALLEL);
        PrimFunc ser = addFunc("concurrent_add", 33);
        for (ParallelRuntime r : ParallelRuntime.values()) {
            try (LlvmKernel kp = JitCheck.BACKEND.compile(
                            par, JitCheck.TARGET, JitOptions.defaults().withRuntime(r));
                    LlvmKernel ks = JitCheck.BACKEND.compile(ser, JitCheck.TARGET)) {
                List<java.util.concurrent.Callable<Void>> jobs = new java.util.ArrayList<>();
                for (int t = 0; t < 3; t++) {
                    final long seed = 100 + t;
                    jobs.add(() -> {
                        for (int rep = 0; rep < 3; rep++) {
                            for (LlvmKernel k : List.of(kp, ks)) {
                                List<NDArray> args = JitCheck.randomArgs(k.func(), seed * 10 + rep);
                                List<NDArray> want = JitCheck.copies(args);
                                dev.kiln.interp.Interpreter.run(k.func(), want.toArray(NDArray[]::new));
                                k.call(args.toArray(NDArray[]::new));
                                args.get(2).assertClose(want.get(2), 0, 0);
                                args.forEach(NDArray::close);
                                want.forEach(NDArray::close);
                            }
                        }
                        return null;
                    });
                }
                var pool = java.util.concurrent.Executors.newFixedThreadPool(4);
                try {
                    for (var fut : pool.invokeAll(jobs)) fut.get();
                } finally {
                    pool.shutdown();
                }
            }
        }
    }

    @Test
    void aClosedKernelRefusesCalls() {
        LlvmKernel k = JitCheck.BACKEND.compile(addFunc("closing", 2), JitCheck.TARGET);
        k.close();
        k.close(); // harmless
        try (NDArray a = NDArray.allocate(DType.FLOAT32, 2, 3)) {
            assertThat(msg(() -> k.call(a, a, a))).contains("kernel 'closing' is closed");
        }
    }

    @Test
    void divisionByZeroIsReportedNamingTheExpression() {
        Var i = new Var("i");
        Buffer a = buf("A", DType.INT32, 10), b = buf("B", DType.INT32, 10), c = buf("C", DType.INT32, 10);
        for (ForKind kind : List.of(ForKind.SERIAL, ForKind.VECTORIZED, ForKind.PARALLEL)) {
            PrimFunc f = new PrimFunc(
                    "div_" + kind.displayName(),
                    List.of(a, b, c),
                    loop(i, 10, kind, store(c, load(a, i).floordiv(load(b, i)), i)));
            try (LlvmKernel k = JitCheck.BACKEND.compile(f, JitCheck.TARGET);
                    NDArray x = NDArray.fromInts(new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10);
                    NDArray y = NDArray.fromInts(new int[] {1, 1, 1, 1, 1, 1, 0, 1, 1, 1}, 10);
                    NDArray z = NDArray.allocate(DType.INT32, 10)) {
                assertThat(msg(() -> k.call(x, y, z)))
                        .isEqualTo("integer division by zero in floordiv(A[i], B[i]) in function 'div_"
                                + kind.displayName() + "'");
                y.setLong(2, 6);
                k.call(x, y, z);
                assertEquals(3, z.getLong(6));
            }
        }
    }

    @Test
    void theSameProgramCompilesOnce() {
        CpuTarget t = JitCheck.TARGET;
        long before = LlvmBackend.compileCount(t);
        LlvmKernel k1 = JitCheck.BACKEND.compile(addFunc("cached", 5), t);
        LlvmKernel k2 = JitCheck.BACKEND.compile(addFunc("cached", 5), t); // equal program, new objects
        assertEquals(before + 1, LlvmBackend.compileCount(t));
        LlvmKernel k3 = JitCheck.BACKEND.compile(addFunc("cached", 6), t); // another shape
        LlvmKernel k4 = JitCheck.BACKEND.compile(
                addFunc("cached", 5), t, JitOptions.defaults().withRuntime(ParallelRuntime.JAVA_POOL)); // other options
        assertEquals(before + 3, LlvmBackend.compileCount(t));
        k1.close();
        try (NDArray a = NDArray.random(DType.FLOAT32, 3, 5, 3);
                NDArray c = NDArray.allocate(DType.FLOAT32, 5, 3)) {
            k2.call(a, a, c); // the code outlives the closed handle that shares it
            assertEquals(2 * a.getDouble(4, 1), c.getDouble(4, 1), 1e-6);
        }
        k2.close();
        k3.close();
        k4.close();
        // same names, different binding structure: for i { for i' } vs for i { for i }
        Var i = new Var("i"), i2 = new Var("i");
        Buffer a = buf("A", DType.FLOAT32, 4, 4);
        PrimFunc p1 = new PrimFunc(
                "shadow",
                List.of(a),
                loop(
                        i,
                        4,
                        ForKind.SERIAL,
                        loop(i2, 4, ForKind.SERIAL, store(a, load(a, i, i2).add(1.0), i, i2))));
        PrimFunc p2 = new PrimFunc(
                "shadow",
                List.of(a),
                loop(
                        i,
                        4,
                        ForKind.SERIAL,
                        loop(i2, 4, ForKind.SERIAL, store(a, load(a, i2, i).add(1.0), i2, i))));
        assertEquals(p1.toString(), p2.toString());
        long mid = LlvmBackend.compileCount(t);
        JitCheck.BACKEND.compile(p1, t).close();
        JitCheck.BACKEND.compile(p2, t).close();
        assertEquals(mid + 2, LlvmBackend.compileCount(t));
    }

    @Test
    void sourceShowsOptimisedIrAndAssembly() {
        Var i = new Var("i");
        Buffer a = buf("A", DType.FLOAT32, 64), b = buf("B", DType.FLOAT32, 64);
        PrimFunc f = new PrimFunc(
                "src",
                List.of(a, b),
                loop(i, 64, ForKind.VECTORIZED, store(b, load(a, i).mul(2.0), i)));
        try (LlvmKernel k = JitCheck.BACKEND.compile(f, JitCheck.TARGET)) {
            String s = k.source();
            assertThat(s)
                    .contains("optimised LLVM IR of 'src'")
                    .containsPattern("define .*i32 @kiln_src_[0-9]+\\(")
                    .contains("; ---- assembly")
                    .containsPattern("(?m)^kiln_src_[0-9]+:")
                    .contains("ret");
            if (JitCheck.TARGET.vectorBits() == 512) assertThat(s).contains("%zmm");
            assertThat(k.compileTimes()).contains("optimise");
        }
    }

    @Test
    void invalidIrIsReportedWithTheVerifierMessageAndTheIr() {
        OrcJit jit = new OrcJit(JitCheck.TARGET);
        try (jit) {
            KilnException e = assertThrows(
                    KilnException.class,
                    () -> jit.add("broken", "define i32 @f(i32 %a) {\n  ret i64 %a\n}\n", List.of("f"), true));
            assertThat(e.getMessage())
                    .contains("'broken'")
                    .contains("--- IR ---")
                    .contains("   2    ret i64 %a");
            e = assertThrows(
                    KilnException.class,
                    () -> jit.add(
                            "unlinked",
                            "declare void @no_such_function()\ndefine void @g() {\n  call void @no_such_function()\n "
                                    + " ret void\n}\n",
                            List.of("g"),
                            true));
            assertThat(e.getMessage()).contains("'unlinked'").contains("no_such_function");
        }
    }

    /**
     * Link failures are reported with their details (the unresolved symbol) after many JITs have come and gone in the
     * process, and two JITs failing at once on two threads each get their own module's errors: one error reporter
     * serves every JIT and routes an error to the thread whose lookup materialises the module ({@code OrcJit}). Each of
     * 40 JITs adds a module, half are closed and all are dropped, the collector runs, then a new JIT fails to link
     * twice, and two more fail at once.
     */
    @Test
    void aLinkFailureAfterManyJitsIsReportedWithItsDetails() throws Exception {
        for (int i = 0; i < 40; i++) {
            OrcJit j = new OrcJit(JitCheck.TARGET);
            j.add("ok" + i, "define i32 @f" + i + "() {\n  ret i32 " + i + "\n}\n", List.of("f" + i), false);
            if (i % 2 == 0) j.close();
        }
        System.gc();
        Thread.sleep(50);
        System.gc();
        String unlinked =
                "declare void @no_such_function_%s()\ndefine void @g() {\n  call void @no_such_function_%s()\n"
                        + "  ret void\n}\n";
        try (OrcJit jit = new OrcJit(JitCheck.TARGET)) {
            for (int round = 0; round < 2; round++) {
                KilnException e = assertThrows(
                        KilnException.class,
                        () -> jit.add("unlinked", String.format(unlinked, "a", "a"), List.of("g"), false));
                assertThat(e.getMessage()).contains("'unlinked'").contains("no_such_function_a");
            }
        }
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            List<java.util.concurrent.Future<String>> msgs = new java.util.ArrayList<>();
            for (String name : List.of("x", "y")) {
                msgs.add(pool.submit(() -> {
                    try (OrcJit jit = new OrcJit(JitCheck.TARGET)) {
                        return assertThrows(
                                        KilnException.class,
                                        () -> jit.add(name, String.format(unlinked, name, name), List.of("g"), false))
                                .getMessage();
                    }
                }));
            }
            assertThat(msgs.get(0).get()).contains("no_such_function_x").doesNotContain("no_such_function_y");
            assertThat(msgs.get(1).get()).contains("no_such_function_y").doesNotContain("no_such_function_x");
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void theServiceLoaderFindsTheLlvmBackend() {
        Backend b = Backend.forTarget(Target.cpu());
        assertSame(LlvmBackend.class, b.getClass());
        assertEquals("llvm", b.name());
        KilnException e = assertThrows(KilnException.class, () -> Backend.forTarget(Target.cuda()));
        assertThat(e.getMessage())
                .contains("no backend supports target 'cuda -arch=sm_90")
                .contains("llvm");
        CpuTarget host = LlvmBackend.hostTarget();
        assertThat(host.cpu()).isNotEmpty();
        assertThat(host.features()).contains("+");
    }

    private static String msg(Runnable r) {
        return assertThrows(KilnException.class, r::run).getMessage();
    }
}
