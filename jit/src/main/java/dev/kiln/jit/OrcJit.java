package dev.kiln.jit;

import static org.bytedeco.llvm.global.LLVM.*;

import dev.kiln.ir.KilnException;
import dev.kiln.target.CpuTarget;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.llvm.LLVM.LLVMContextRef;
import org.bytedeco.llvm.LLVM.LLVMErrorRef;
import org.bytedeco.llvm.LLVM.LLVMJITEvaluatedSymbol;
import org.bytedeco.llvm.LLVM.LLVMJITSymbolFlags;
import org.bytedeco.llvm.LLVM.LLVMMemoryBufferRef;
import org.bytedeco.llvm.LLVM.LLVMModuleRef;
import org.bytedeco.llvm.LLVM.LLVMOrcCSymbolMapPair;
import org.bytedeco.llvm.LLVM.LLVMOrcDefinitionGeneratorRef;
import org.bytedeco.llvm.LLVM.LLVMOrcErrorReporterFunction;
import org.bytedeco.llvm.LLVM.LLVMOrcJITDylibRef;
import org.bytedeco.llvm.LLVM.LLVMOrcLLJITBuilderRef;
import org.bytedeco.llvm.LLVM.LLVMOrcLLJITRef;
import org.bytedeco.llvm.LLVM.LLVMOrcResourceTrackerRef;
import org.bytedeco.llvm.LLVM.LLVMOrcThreadSafeContextRef;
import org.bytedeco.llvm.LLVM.LLVMOrcThreadSafeModuleRef;
import org.bytedeco.llvm.LLVM.LLVMPassBuilderOptionsRef;
import org.bytedeco.llvm.LLVM.LLVMTargetDataRef;
import org.bytedeco.llvm.LLVM.LLVMTargetMachineRef;

/**
 * One ORC LLJIT for one CPU target: turns LLVM IR text into machine code in this process.
 * {@link #add} parses, verifies, optimises ({@code default<O3>} with the target's machine) and
 * generates machine code (an object file in memory) for a module outside any lock, each call
 * with its own context and target machine, so that threads compile concurrently; then it links
 * the object under the JIT's lock (short: relocation and symbol lookup) and returns a
 * {@link JitModule} that owns the code. Libc and libm symbols resolve from the process; the Java parallel runtime's
 * upcall stub is defined as an absolute symbol.
 */
final class OrcJit implements AutoCloseable {
    private final CpuTarget target;
    private final LLVMOrcLLJITRef jit;
    private final LLVMOrcJITDylibRef dylib;
    private final Object lock = new Object();
    private boolean closed;

    /**
     * Whether machine code is generated at the ORC link, under {@link #lock} (the old path,
     * {@code -Dkiln.jit.codegenInLock=true}), instead of on the calling thread before it; for A/B
     * measurements ({@code CompileLatencyBenchmark}) and as a fallback.
     */
    static volatile boolean codegenInLock = Boolean.getBoolean("kiln.jit.codegenInLock");

    /** The optimisation pipeline; changed only by experiments ({@code UnrolledPipelineBenchmark}). */
    static volatile String pipeline = "default<O3>";

    /** Whether the pipeline unrolls loops; changed only by experiments ({@code UnrolledPipelineBenchmark}). */
    static volatile boolean loopUnrolling = true;

    /**
     * Collects materialisation errors, which the C API's lookup only summarises. One reporter serves every JIT of the
     * process and is never collected. With one JavaCPP callback per JIT, a link failure (an unresolved symbol) crashed
     * the JVM in LLVM's error report ({@code JITLinkCtx::notifyFailed} calling address 0) in one order of this module's
     * tests: {@code KernelHandleTest}'s unresolved symbol after a test that had compiled for a second CPU target, 4
     * runs of 4; with this reporter 0 of 2 (what in the callback's lifetime went wrong was not found). The errors go to
     * the thread that runs the lookup ({@link #ERRORS}): LLJIT materialises on the looking-up thread (no task
     * dispatcher is configured), so each lookup sees its own module's errors; an error reported outside a lookup is
     * logged.
     */
    private static final class ErrorReporter extends LLVMOrcErrorReporterFunction {
        @Override
        public void call(Pointer ctx, LLVMErrorRef err) {
            String m = Llvm.errorMessage(err);
            List<String> sink = ERRORS.get();
            if (sink != null) {
                sink.add(m);
            } else {
                System.getLogger(OrcJit.class.getName()).log(System.Logger.Level.WARNING, "LLVM JIT: " + m);
            }
        }
    }

    /** The reporter of every JIT's session (see {@link ErrorReporter}). */
    private static final ErrorReporter REPORTER = new ErrorReporter();

    /** The materialisation errors of the lookup running on this thread, or null outside a lookup. */
    private static final ThreadLocal<List<String>> ERRORS = new ThreadLocal<>();

    OrcJit(CpuTarget target) {
        Llvm.init();
        this.target = target;
        LLVMTargetMachineRef tm = Llvm.targetMachine(target);
        LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
        LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
                builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
        LLVMOrcLLJITRef j = new LLVMOrcLLJITRef();
        Llvm.check(LLVMOrcCreateLLJIT(j, builder), "LLVM: cannot create an LLJIT for " + target);
        this.jit = j;
        this.dylib = LLVMOrcLLJITGetMainJITDylib(jit);
        LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(jit), REPORTER, null);
        LLVMOrcDefinitionGeneratorRef gen = new LLVMOrcDefinitionGeneratorRef();
        Llvm.check(
                LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(gen, LLVMOrcLLJITGetGlobalPrefix(jit), null, null),
                "LLVM: cannot create the process symbol generator");
        LLVMOrcJITDylibAddGenerator(dylib, gen);
    }

    CpuTarget target() {
        return target;
    }

    /** Makes {@code name} resolve to {@code address} in every module added later. */
    void defineAbsolute(String name, long address) {
        synchronized (lock) {
            LLVMJITSymbolFlags flags = new LLVMJITSymbolFlags();
            flags.GenericFlags((byte) (LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable));
            flags.TargetFlags((byte) 0);
            LLVMJITEvaluatedSymbol sym = new LLVMJITEvaluatedSymbol();
            sym.Address(address);
            sym.Flags(flags);
            LLVMOrcCSymbolMapPair pair = new LLVMOrcCSymbolMapPair();
            pair.Name(LLVMOrcLLJITMangleAndIntern(jit, name));
            pair.Sym(sym);
            Llvm.check(
                    LLVMOrcJITDylibDefine(dylib, LLVMOrcAbsoluteSymbols(pair, 1)),
                    "LLVM: cannot define symbol " + name);
        }
    }

    /**
     * Compiles module {@code ir} and returns the addresses of {@code symbols}. {@code what} names
     * the function for messages; a parse or verifier failure throws with LLVM's message and the IR.
     */
    JitModule add(String what, String ir, List<String> symbols, boolean optimize) {
        long t0 = System.nanoTime();
        LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
        LLVMModuleRef mod = null;
        LLVMMemoryBufferRef object = null;
        String optimized;
        long tParse, tOpt, tEmit;
        boolean inLock = codegenInLock;
        try {
            LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(tsc);
            mod = parse(ctx, what, ir);
            tParse = System.nanoTime();
            LLVMTargetMachineRef tm = Llvm.targetMachine(target);
            try {
                LLVMSetTarget(mod, target.triple());
                LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
                LLVMSetModuleDataLayout(mod, td);
                LLVMDisposeTargetData(td);
                verify(mod, what, ir);
                if (optimize) optimize(mod, tm, what, ir);
                tOpt = System.nanoTime();
                optimized = Llvm.take(LLVMPrintModuleToString(mod));
                if (!inLock) object = emitObject(tm, mod, what);
            } finally {
                LLVMDisposeTargetMachine(tm);
            }
            tEmit = System.nanoTime();
        } catch (RuntimeException e) {
            LLVMOrcDisposeThreadSafeContext(tsc);
            throw e;
        }
        LLVMOrcThreadSafeModuleRef tsm = null;
        if (inLock) {
            tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
        } else {
            LLVMDisposeModule(mod);
        }
        LLVMOrcDisposeThreadSafeContext(tsc);
        synchronized (lock) {
            if (closed) {
                if (tsm != null) LLVMOrcDisposeThreadSafeModule(tsm);
                if (object != null) LLVMDisposeMemoryBuffer(object);
                throw new KilnException("the LLVM JIT for " + target + " is closed");
            }
            LLVMOrcResourceTrackerRef rt = LLVMOrcJITDylibCreateResourceTracker(dylib);
            LLVMErrorRef err = inLock
                    ? LLVMOrcLLJITAddLLVMIRModuleWithRT(jit, rt, tsm)
                    : LLVMOrcLLJITAddObjectFileWithRT(jit, rt, object); // takes the buffer, also on error
            if (err != null && !err.isNull()) {
                LLVMOrcReleaseResourceTracker(rt);
                throw new KilnException(
                        "LLVM: cannot add the module of '" + what + "' to the JIT: " + Llvm.errorMessage(err));
            }
            Map<String, Long> addrs = new LinkedHashMap<>();
            List<String> sessionErrors = new ArrayList<>();
            ERRORS.set(sessionErrors);
            try (LongPointer out = new LongPointer(1)) {
                for (String s : symbols) {
                    LLVMErrorRef e = LLVMOrcLLJITLookup(jit, out, s);
                    if (e != null && !e.isNull()) {
                        String msg = Llvm.errorMessage(e);
                        String details = String.join("; ", sessionErrors);
                        removeTracker(rt);
                        throw new KilnException("LLVM: linking '" + what + "' failed looking up " + s + ": " + msg
                                + (details.isEmpty() ? "" : " (" + details + ")"));
                    }
                    addrs.put(s, out.get());
                }
            } finally {
                ERRORS.remove();
            }
            long t1 = System.nanoTime();
            return new JitModule(
                    this,
                    rt,
                    addrs,
                    optimized,
                    new CompileTimes(
                            (tParse - t0) / 1e6, (tOpt - tParse) / 1e6, (tEmit - tOpt) / 1e6, (t1 - tEmit) / 1e6));
        }
    }

    /**
     * Machine code for {@code mod} as an object file in memory, generated on the calling thread with
     * its own target machine (the module's context and {@code tm} belong to this call alone, so
     * threads generate code concurrently); the module stays the caller's.
     */
    private static LLVMMemoryBufferRef emitObject(LLVMTargetMachineRef tm, LLVMModuleRef mod, String what) {
        BytePointer err = new BytePointer((Pointer) null);
        LLVMMemoryBufferRef buf = new LLVMMemoryBufferRef();
        if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, err, buf) != 0) {
            LLVMDisposeModule(mod);
            throw new KilnException("LLVM: cannot generate machine code for '" + what + "': " + Llvm.take(err));
        }
        return buf;
    }

    /** Removes a module's code; called once by its {@link JitModule}. */
    void remove(LLVMOrcResourceTrackerRef rt) {
        synchronized (lock) {
            if (!closed) removeTracker(rt);
        }
    }

    private static void removeTracker(LLVMOrcResourceTrackerRef rt) {
        LLVMErrorRef err = LLVMOrcResourceTrackerRemove(rt);
        LLVMOrcReleaseResourceTracker(rt);
        Llvm.check(err, "LLVM: cannot remove a JIT module");
    }

    /** The assembly LLVM emits for module {@code ir} (parsed afresh: code generation consumes a module). */
    String assembly(String what, String ir) {
        LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
        try {
            LLVMModuleRef mod = parse(LLVMOrcThreadSafeContextGetContext(tsc), what, ir);
            LLVMTargetMachineRef tm = Llvm.targetMachine(target);
            try {
                LLVMSetTarget(mod, target.triple());
                BytePointer err = new BytePointer((Pointer) null);
                LLVMMemoryBufferRef buf = new LLVMMemoryBufferRef();
                if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, err, buf) != 0) {
                    throw new KilnException("LLVM: cannot emit assembly for '" + what + "': " + Llvm.take(err));
                }
                try {
                    BytePointer start = LLVMGetBufferStart(buf);
                    byte[] bytes = new byte[(int) LLVMGetBufferSize(buf)];
                    start.get(bytes);
                    return new String(bytes, StandardCharsets.UTF_8);
                } finally {
                    LLVMDisposeMemoryBuffer(buf);
                }
            } finally {
                LLVMDisposeModule(mod);
                LLVMDisposeTargetMachine(tm);
            }
        } finally {
            LLVMOrcDisposeThreadSafeContext(tsc);
        }
    }

    private static LLVMModuleRef parse(LLVMContextRef ctx, String what, String ir) {
        byte[] bytes = ir.getBytes(StandardCharsets.UTF_8);
        LLVMMemoryBufferRef buf;
        try (BytePointer data = new BytePointer(bytes.length + 1);
                BytePointer name = new BytePointer(what)) {
            data.put(bytes).put(bytes.length, (byte) 0);
            buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(data, bytes.length, name);
        }
        LLVMModuleRef mod = new LLVMModuleRef();
        BytePointer err = new BytePointer((Pointer) null);
        if (LLVMParseIRInContext(ctx, buf, mod, err) != 0) { // consumes buf
            throw new KilnException("LLVM rejected the IR generated for '" + what + "': " + Llvm.take(err)
                    + "\n--- IR ---\n" + numbered(ir));
        }
        return mod;
    }

    private static void verify(LLVMModuleRef mod, String what, String ir) {
        BytePointer msg = new BytePointer((Pointer) null);
        if (LLVMVerifyModule(mod, LLVMReturnStatusAction, msg) != 0) {
            String m = Llvm.take(msg);
            LLVMDisposeModule(mod);
            throw new KilnException("LLVM verifier rejected the IR generated for '" + what + "': " + m
                    + "\n--- IR ---\n" + numbered(ir));
        }
        Llvm.take(msg);
    }

    private static void optimize(LLVMModuleRef mod, LLVMTargetMachineRef tm, String what, String ir) {
        LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
        try {
            LLVMPassBuilderOptionsSetLoopVectorization(pbo, 1);
            LLVMPassBuilderOptionsSetSLPVectorization(pbo, 1);
            LLVMPassBuilderOptionsSetLoopInterleaving(pbo, 1);
            LLVMPassBuilderOptionsSetLoopUnrolling(pbo, loopUnrolling ? 1 : 0);
            LLVMErrorRef err = LLVMRunPasses(mod, pipeline, tm, pbo);
            if (err != null && !err.isNull()) {
                String m = Llvm.errorMessage(err);
                LLVMDisposeModule(mod);
                throw new KilnException(
                        "LLVM optimisation of '" + what + "' failed: " + m + "\n--- IR ---\n" + numbered(ir));
            }
        } finally {
            LLVMDisposePassBuilderOptions(pbo);
        }
    }

    /** The IR with line numbers, so that LLVM's "line:column" messages can be followed. */
    static String numbered(String ir) {
        StringBuilder sb = new StringBuilder();
        int n = 1;
        for (String l : ir.split("\n", -1))
            sb.append(String.format("%4d  ", n++)).append(l).append('\n');
        return sb.toString();
    }

    @Override
    public void close() {
        synchronized (lock) {
            if (closed) return;
            closed = true;
            Llvm.check(LLVMOrcDisposeLLJIT(jit), "LLVM: cannot dispose the JIT");
        }
    }
}
