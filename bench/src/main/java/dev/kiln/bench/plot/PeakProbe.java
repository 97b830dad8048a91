package dev.kiln.bench.plot;

import dev.kiln.ir.KilnException;
import dev.kiln.jit.RawIr;
import dev.kiln.target.CpuTarget;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;

/**
 * The peak of one instruction set, measured: a loop of {@link #CHAINS} independent accumulator
 * chains of one vector instruction (512-bit VNNI {@code vpdpbusd}, BF16 {@code vdpbf16ps}, FP16
 * {@code vfmadd231ph}, an f32 {@code vfmadd}, or a 256-bit f32 {@code vfmadd} for machines without AVX-512),
 * written as LLVM IR text and compiled by Kiln's own JIT, run on {@code threads} platform threads at once. Operations
 * count multiplies and adds (a multiply-accumulate is 2). The roofline's compute roof
 * ({@code MachinePeaks}) is the f32 FMA probe at the widest width the machine has.
 */
public enum PeakProbe {
    VNNI("int8 vpdpbusd", "llvm.x86.avx512.vpdpbusd.512", "<16 x i32>", "<16 x i32>", 128, "avx512vnni"),
    BF16("bf16 vdpbf16ps", "llvm.x86.avx512bf16.dpbf16ps.512", "<16 x float>", "<32 x bfloat>", 64, "avx512bf16"),
    FMA("f32 vfmadd", "llvm.fma.v16f32", "<16 x float>", "<16 x float>", 32, "avx512f"),
    FP16("f16 vfmadd231ph", "llvm.fma.v32f16", "<32 x half>", "<32 x half>", 64, "avx512fp16"),
    FMA256("f32 vfmadd 256-bit", "llvm.fma.v8f32", "<8 x float>", "<8 x float>", 16, "fma");

    /** Independent chains: enough to cover a 4-cycle latency on 2 ports with room to spare. */
    public static final int CHAINS = 12;

    public final String label;
    public final String intrinsic;
    final String accType;
    final String opType;
    public final int opsPerInstruction;
    final String feature;

    PeakProbe(String label, String intrinsic, String accType, String opType, int ops, String feature) {
        this.label = label;
        this.intrinsic = intrinsic;
        this.accType = accType;
        this.opsPerInstruction = ops;
        this.opType = opType;
        this.feature = feature;
    }

    /** Why this probe cannot run on {@code target}, or null. */
    public String unavailableReason(CpuTarget target) {
        if (feature.startsWith("avx512") && !target.hasFeature("avx512f")) return "skipped: no avx512f";
        return target.hasFeature(feature) ? null : "skipped: no " + feature.replace("avx512", "avx512_");
    }

    /** The IR: {@code void kiln_peak(i64 n, ptr in, ptr out)}, n iterations of CHAINS instructions. */
    String ir() {
        boolean fma = this == FMA || this == FMA256 || this == FP16;
        StringBuilder b = new StringBuilder();
        b.append(
                        fma
                                ? "declare " + accType + " @" + intrinsic + "(" + accType + ", " + accType + ", "
                                        + accType + ")\n"
                                : "declare " + accType + " @" + intrinsic + "(" + accType + ", " + opType + ", "
                                        + opType + ")\n")
                .append("define void @kiln_peak(i64 %n, ptr %in, ptr %out) {\nentry:\n")
                .append("  %x = load ")
                .append(opType)
                .append(", ptr %in, align 64\n")
                .append("  %p1 = getelementptr i8, ptr %in, i64 64\n  %y = load ")
                .append(opType)
                .append(", ptr %p1, align 64\n");
        // distinct starting values (read at run time) keep the optimiser from merging identical chains
        for (int c = 0; c < CHAINS; c++) {
            b.append("  %q")
                    .append(c)
                    .append(" = getelementptr i8, ptr %in, i64 ")
                    .append(128 + 64 * c);
            b.append("\n  %init")
                    .append(c)
                    .append(" = load ")
                    .append(accType)
                    .append(", ptr %q")
                    .append(c);
            b.append(", align 64\n");
        }
        b.append("  br label %loop\nloop:\n  %i = phi i64 [0, %entry], [%i1, %loop]\n");
        for (int c = 0; c < CHAINS; c++) {
            b.append("  %a").append(c).append(" = phi ").append(accType);
            b.append(" [%init").append(c).append(", %entry], [%b").append(c).append(", %loop]\n");
        }
        for (int c = 0; c < CHAINS; c++) {
            b.append("  %b")
                    .append(c)
                    .append(" = call ")
                    .append(accType)
                    .append(" @")
                    .append(intrinsic);
            if (fma) {
                b.append("(").append(opType).append(" %x, ").append(opType).append(" %y, ");
                b.append(accType).append(" %a").append(c).append(")\n");
            } else {
                b.append("(").append(accType).append(" %a").append(c).append(", ");
                b.append(opType).append(" %x, ").append(opType).append(" %y)\n");
            }
        }
        b.append("  %i1 = add i64 %i, 1\n  %c = icmp ult i64 %i1, %n\n  br i1 %c, label %loop, label %exit\nexit:\n");
        String prev = "%b0";
        String add = accType.contains("float") || accType.contains("half") ? "fadd" : "add";
        for (int c = 1; c < CHAINS; c++) {
            b.append("  %s")
                    .append(c)
                    .append(" = ")
                    .append(add)
                    .append(' ')
                    .append(accType)
                    .append(' ');
            b.append(prev).append(", %b").append(c).append('\n');
            prev = "%s" + c;
        }
        b.append("  store ").append(accType).append(' ').append(prev).append(", ptr %out, align 64\n  ret void\n}\n");
        return b.toString();
    }

    /** The instruction the probe times, as the assembly spells it (a prefix for the FMA forms 132/213/231). */
    String mnemonic() {
        return switch (this) {
            case VNNI -> "vpdpbusd";
            case BF16 -> "vdpbf16ps";
            case FMA, FMA256 -> "vfmadd";
            case FP16 -> "vfmadd*ph";
        };
    }

    /** How many of the probe's instructions {@code asm} holds (float16 FMAs: the {@code ph} forms only). */
    long instructions(String asm) {
        return asm.lines()
                .map(String::strip)
                .filter(l -> this == FP16
                        ? l.startsWith("vfmadd") && l.split("\\s+")[0].endsWith("ph")
                        : l.contains(mnemonic()))
                .count();
    }

    /** One measurement: operations per second over all threads, and per thread. */
    public record Peak(PeakProbe probe, int threads, double opsPerSecond, String note) {
        public double perCore() {
            return opsPerSecond / threads;
        }
    }

    /** Runs the probe on {@code threads} threads, {@code iterations} loop trips each; the best of {@code repeats}. */
    public Peak measure(CpuTarget target, int threads, long iterations, int repeats) {
        String why = unavailableReason(target);
        if (why != null) return new Peak(this, threads, Double.NaN, why);
        try (RawIr code = RawIr.compile(target, "peak probe " + name(), ir(), "kiln_peak");
                Arena arena = Arena.ofShared()) {
            long found = instructions(code.assembly());
            if (found < CHAINS) {
                throw new KilnException("peak probe " + name() + ": the compiled loop has " + found + " " + mnemonic()
                        + " instructions, not the " + CHAINS + " independent chains written");
            }
            MethodHandle h = Linker.nativeLinker()
                    .downcallHandle(
                            MemorySegment.ofAddress(code.address()),
                            FunctionDescriptor.ofVoid(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
            MemorySegment in = arena.allocate(128 + 64L * CHAINS, 64);
            for (int i = 0; i < 32; i++) in.setAtIndex(ValueLayout.JAVA_INT, i, 0x3f803f80); // bf16 1.0 pairs
            for (int i = 32; i < in.byteSize() / 4; i++) in.setAtIndex(ValueLayout.JAVA_INT, i, i); // chain starts
            double best = 0;
            for (int r = 0; r < repeats; r++) best = Math.max(best, runOnce(h, arena, in, threads, iterations));
            return new Peak(this, threads, best, "");
        }
    }

    private double runOnce(MethodHandle h, Arena arena, MemorySegment in, int threads, long iterations) {
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Thread> ts = new ArrayList<>();
        long[] begin = new long[threads], end = new long[threads];
        Throwable[] failure = new Throwable[threads];
        for (int t = 0; t < threads; t++) {
            MemorySegment out = arena.allocate(64, 64);
            int id = t;
            Thread th = new Thread(() -> {
                try {
                    start.await();
                    begin[id] = System.nanoTime();
                    h.invokeExact(iterations, in, out);
                    end[id] = System.nanoTime();
                } catch (Throwable e) {
                    failure[id] = e;
                }
            });
            th.start();
            ts.add(th);
        }
        try {
            for (Thread th : ts) th.join();
        } catch (InterruptedException e) {
            throw new KilnException("peak probe " + name() + " was interrupted: " + e);
        }
        for (Throwable f : failure) if (f != null) throw new KilnException("peak probe " + name() + " failed: " + f);
        // from the first thread's start to the last one's end: all threads' work over the span they shared
        long first = java.util.Arrays.stream(begin).min().orElseThrow();
        long last = java.util.Arrays.stream(end).max().orElseThrow();
        return (double) threads * iterations * CHAINS * opsPerInstruction / ((last - first) / 1e9);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%s (%s)", label, intrinsic);
    }
}
