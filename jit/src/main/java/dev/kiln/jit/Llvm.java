package dev.kiln.jit;

import static org.bytedeco.llvm.global.LLVM.*;

import dev.kiln.ir.KilnException;
import dev.kiln.target.CpuTarget;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Loader;
import org.bytedeco.llvm.LLVM.LLVMErrorRef;
import org.bytedeco.llvm.LLVM.LLVMTargetMachineRef;
import org.bytedeco.llvm.LLVM.LLVMTargetRef;

/**
 * The one place that touches LLVM's process-wide state: native library loading and target
 * initialisation (once), host detection, target machines, and turning LLVM errors and strings
 * into Java ones. Every other class of the backend goes through these helpers, so moving to a new
 * LLVM release (21 changes the ThreadSafeContext API) touches this file and {@link OrcJit}.
 */
final class Llvm {
    private Llvm() {}

    private static volatile boolean initialized;

    /** Loads libLLVM and registers the native target, asm printer and parser; idempotent. */
    static void init() {
        if (initialized) return;
        synchronized (Llvm.class) {
            if (initialized) return;
            Loader.load(org.bytedeco.llvm.global.LLVM.class);
            if (LLVMInitializeNativeTarget() != 0) throw new KilnException("LLVM: cannot initialise the native target");
            if (LLVMInitializeNativeAsmPrinter() != 0) {
                throw new KilnException("LLVM: cannot initialise the native asm printer");
            }
            LLVMInitializeNativeAsmParser();
            initialized = true;
        }
    }

    /** LLVM's name for the host CPU ("znver5"). */
    static String hostCpuName() {
        init();
        return take(LLVMGetHostCPUName());
    }

    /** LLVM's feature string for the host CPU ("+avx2,+avx512f,-amx-tile,..."). */
    static String hostCpuFeatures() {
        init();
        return take(LLVMGetHostCPUFeatures());
    }

    /** A target machine for {@code t} at the aggressive optimisation level, PIC, JIT code model. */
    static LLVMTargetMachineRef targetMachine(CpuTarget t) {
        init();
        LLVMTargetRef target = new LLVMTargetRef();
        BytePointer err = new BytePointer((BytePointer) null);
        try (BytePointer triple = new BytePointer(t.triple())) {
            if (LLVMGetTargetFromTriple(triple, target, err) != 0) {
                throw new KilnException(
                        "LLVM has no target for triple '" + t.triple() + "' (target " + t + "): " + take(err));
            }
        }
        LLVMTargetMachineRef tm = LLVMCreateTargetMachine(
                target,
                t.triple(),
                t.cpu(),
                t.features(),
                LLVMCodeGenLevelAggressive,
                LLVMRelocPIC,
                LLVMCodeModelJITDefault);
        if (tm == null || tm.isNull()) throw new KilnException("LLVM cannot create a target machine for " + t);
        return tm;
    }

    /** Throws with {@code context} and LLVM's message when {@code err} is an error; consumes it. */
    static void check(LLVMErrorRef err, String context) {
        if (err != null && !err.isNull()) throw new KilnException(context + ": " + errorMessage(err));
    }

    /** The message of an LLVM error; consumes the error. */
    static String errorMessage(LLVMErrorRef err) {
        BytePointer p = LLVMGetErrorMessage(err);
        try {
            return p.getString();
        } finally {
            LLVMDisposeErrorMessage(p);
        }
    }

    /** The string of an LLVM-allocated message, which is then freed; null gives "". */
    static String take(BytePointer p) {
        if (p == null || p.isNull()) return "";
        try {
            return p.getString();
        } finally {
            LLVMDisposeMessage(p);
        }
    }
}
