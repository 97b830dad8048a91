package dev.kiln.jit;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.store;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.IntImm;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.PrimFunc;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * The cost of calling a tiny kernel ({@code C[0] = A[0] + B[0]}) through the kernel handle and
 * through the raw downcall shapes it chose between, against the same work in plain Java. Not part
 * of the test suite; run with
 * {@code ./kiln mvn verify -pl jit -am -Dtest=CallOverheadBenchmark -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class CallOverheadBenchmark {
    private static final int CALLS = 5_000_000;
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT;

    /** The kernel's addresses, set before {@link Constants} initialises. */
    static final class Addresses {
        static volatile long address, packedAddress;
    }

    /** Handles in static finals (constants to the JIT compiler). */
    static final class Constants {
        static final long address = Addresses.address, packedAddress = Addresses.packedAddress;
        static final MethodHandle CRITICAL = Linker.nativeLinker()
                .downcallHandle(
                        MemorySegment.ofAddress(address),
                        FunctionDescriptor.of(
                                ValueLayout.JAVA_INT,
                                ValueLayout.JAVA_LONG,
                                ValueLayout.JAVA_LONG,
                                ValueLayout.JAVA_LONG),
                        Linker.Option.critical(false));
        static final MethodHandle NORMAL = Linker.nativeLinker()
                .downcallHandle(
                        MemorySegment.ofAddress(address),
                        FunctionDescriptor.of(
                                ValueLayout.JAVA_INT,
                                ValueLayout.JAVA_LONG,
                                ValueLayout.JAVA_LONG,
                                ValueLayout.JAVA_LONG));
        static final MethodHandle SEGMENTS = Linker.nativeLinker()
                .downcallHandle(
                        MemorySegment.ofAddress(address),
                        FunctionDescriptor.of(
                                ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
        static final MethodHandle PACKED = Linker.nativeLinker()
                .downcallHandle(
                        MemorySegment.ofAddress(packedAddress),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG),
                        Linker.Option.critical(false));
    }

    interface Body {
        void run(int calls) throws Throwable;
    }

    @Test
    void run() throws Throwable {
        Buffer a = buf("A", DType.FLOAT32, 1), b = buf("B", DType.FLOAT32, 1), c = buf("C", DType.FLOAT32, 1);
        IntImm z = IntImm.i32(0);
        PrimFunc f = new PrimFunc("tiny", List.of(a, b, c), store(c, load(a, z).add(load(b, z)), z));
        try (LlvmKernel k = JitCheck.BACKEND.compile(f, JitCheck.TARGET);
                NDArray x = NDArray.fromFloats(new float[] {1}, 1);
                NDArray y = NDArray.fromFloats(new float[] {2}, 1);
                NDArray r = NDArray.allocate(DType.FLOAT32, 1);
                Arena arena = Arena.ofConfined()) {
            Addresses.address = k.code().module.address(k.code().gen.symbol());
            Addresses.packedAddress = k.code().module.address(k.code().gen.packedSymbol());
            long ax = x.segment().address(),
                    ay = y.segment().address(),
                    ar = r.segment().address();
            MemorySegment sx = x.segment(), sy = y.segment(), sr = r.segment();
            MethodHandle field = k.code().entry;
            MemorySegment argv = arena.allocate(ValueLayout.JAVA_LONG, 3);
            String[] names = {
                "plain Java (same work on the segments)",
                "LlvmKernel.call (checks + critical downcall)",
                "raw critical downcall, long addresses, static final",
                "raw critical downcall, long addresses, instance field",
                "raw normal downcall, long addresses",
                "raw normal downcall, MemorySegment arguments",
                "raw critical downcall, packed argv (3 stores + call)",
            };
            Body[] bodies = {
                n -> {
                    for (int i = 0; i < n; i++) sr.set(F, 0, sx.get(F, 0) + sy.get(F, 0));
                },
                n -> {
                    for (int i = 0; i < n; i++) k.call(x, y, r);
                },
                n -> {
                    for (int i = 0; i < n; i++) {
                        int s = (int) Constants.CRITICAL.invokeExact(ax, ay, ar);
                    }
                },
                n -> {
                    for (int i = 0; i < n; i++) {
                        int s = (int) field.invokeExact(ax, ay, ar);
                    }
                },
                n -> {
                    for (int i = 0; i < n; i++) {
                        int s = (int) Constants.NORMAL.invokeExact(ax, ay, ar);
                    }
                },
                n -> {
                    for (int i = 0; i < n; i++) {
                        int s = (int) Constants.SEGMENTS.invokeExact(sx, sy, sr);
                    }
                },
                n -> {
                    for (int i = 0; i < n; i++) {
                        argv.setAtIndex(ValueLayout.JAVA_LONG, 0, ax);
                        argv.setAtIndex(ValueLayout.JAVA_LONG, 1, ay);
                        argv.setAtIndex(ValueLayout.JAVA_LONG, 2, ar);
                        int s = (int) Constants.PACKED.invokeExact(argv.address());
                    }
                },
            };
            int rounds = 7;
            double[][] ns = new double[bodies.length][rounds];
            for (int round = -2; round < rounds; round++) {
                for (int v = 0; v < bodies.length; v++) {
                    long t0 = System.nanoTime();
                    bodies[v].run(CALLS);
                    if (round >= 0) ns[v][round] = (System.nanoTime() - t0) / (double) CALLS;
                }
            }
            if (r.getDouble(0) != 3) throw new AssertionError("the kernel computed " + r.getDouble(0));
            StringBuilder sb = new StringBuilder("call overhead of a 3-buffer kernel C[0] = A[0] + B[0], ")
                    .append(CALLS)
                    .append(" calls per sample, ")
                    .append(rounds)
                    .append(" samples, round-robin\n")
                    .append("loadavg: ")
                    .append(Files.readString(Path.of("/proc/loadavg")).trim())
                    .append('\n')
                    .append("LlvmKernel chose ")
                    .append(k.criticalCalls() ? "critical" : "normal")
                    .append(" calls\n");
            sb.append(String.format(Locale.ROOT, "%-56s %10s %10s %12s%n", "variant", "median", "best", "vs Java"));
            double base = median(ns[0]);
            for (int v = 0; v < bodies.length; v++) {
                double med = median(ns[v]);
                sb.append(String.format(
                        Locale.ROOT,
                        "%-56s %7.1f ns %7.1f ns %11.2fx%n",
                        names[v],
                        med,
                        Arrays.stream(ns[v]).min().orElse(0),
                        med / base));
            }
            System.out.println(sb);
            Files.createDirectories(Path.of("target"));
            Files.writeString(Path.of("target/call-overhead-benchmark.txt"), sb.toString());
        }
    }

    private static double median(double[] a) {
        double[] s = a.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
