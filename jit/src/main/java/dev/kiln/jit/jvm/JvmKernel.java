package dev.kiln.jit.jvm;

import dev.kiln.ir.KilnException;
import dev.kiln.jit.KernelArgs;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A function compiled by the JVM backend. {@link #call} checks every argument against its
 * parameter (count, dtype, shape, strides, that it is still open and large enough, and that no
 * buffer the kernel writes overlaps another argument) and throws {@link KilnException} naming the
 * parameter before the generated code runs ({@link KernelArgs}, shared with the LLVM backend);
 * then it passes the arguments' segments to the hidden class. Closing the handle only makes later
 * calls fail: the class stays in the compile cache until evicted, and the JVM unloads it once
 * nothing refers to it.
 */
public final class JvmKernel implements CompiledKernel {
    private final CompiledClass code;
    private final PrimFunc func;
    private final KernelArgs checker;
    private volatile boolean closed;

    JvmKernel(CompiledClass code, PrimFunc func) {
        this.code = code;
        this.func = func;
        this.checker = new KernelArgs(func, code.written, false);
    }

    @Override
    public void call(NDArray... args) {
        if (closed) throw new KilnException("kernel '" + func.name() + "' is closed");
        MemorySegment[] segs = checker.check(args);
        try {
            code.entry.run(segs);
        } catch (IndexOutOfBoundsException e) {
            throw new KilnException(
                    "kernel '" + func.name() + "' accessed memory outside a buffer: " + e.getMessage(), e);
        }
    }

    /** The generated class as ASM's textifier prints it, after the notes of code generation. */
    @Override
    public String source() {
        return code.text();
    }

    /** Remarks of code generation: loops generated differently from their annotation, and why. */
    public List<String> notes() {
        return code.notes;
    }

    /**
     * The register promotions the generator made: for each, the serial loop and the buffer whose
     * vectors it keeps in locals (so in registers) instead of reading and writing memory every iteration.
     */
    public List<String> promotions() {
        return code.promotions;
    }

    /** The class file. */
    public byte[] classFile() {
        return code.bytes.clone();
    }

    /** Milliseconds spent generating bytecode and defining the hidden class. */
    public String compileTimes() {
        return String.format(java.util.Locale.ROOT, "generate %.2f ms, define %.2f ms", code.generateMs, code.defineMs);
    }

    @Override
    public PrimFunc func() {
        return func;
    }

    @Override
    public Target target() {
        return code.target;
    }

    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "JvmKernel(" + func.name() + " for " + code.target + ")";
    }
}
