package dev.kiln.jit.jvm;

import dev.kiln.target.CpuTarget;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.util.Textifier;
import org.objectweb.asm.util.TraceClassVisitor;

/**
 * A kernel class as the compile cache keeps it: the class file, the instance of the hidden class
 * that runs it, the notes of code generation and how long generation took. Kernels compiled from
 * equal programs share one.
 */
final class CompiledClass {
    final byte[] bytes;
    final KernelEntry entry;
    final List<String> notes;
    /** The register promotions made (which loop keeps which buffer's vectors in locals). */
    final List<String> promotions;

    final CpuTarget target;
    final String functionName;
    final boolean[] written;
    final double generateMs;
    final double defineMs;
    private volatile String text;

    CompiledClass(
            byte[] bytes,
            KernelEntry entry,
            List<String> notes,
            List<String> promotions,
            CpuTarget target,
            String functionName,
            boolean[] written,
            double generateMs,
            double defineMs) {
        this.bytes = bytes;
        this.entry = entry;
        this.notes = List.copyOf(notes);
        this.promotions = List.copyOf(promotions);
        this.target = target;
        this.functionName = functionName;
        this.written = written;
        this.generateMs = generateMs;
        this.defineMs = defineMs;
    }

    /** The class file as ASM's textifier prints it, after the notes and the register promotions. */
    String text() {
        String t = text;
        if (t == null) {
            StringWriter sw = new StringWriter();
            sw.append("// JVM bytecode of '")
                    .append(functionName)
                    .append("' for ")
                    .append(target.toString())
                    .append('\n');
            for (String n : notes) sw.append("// note: ").append(n).append('\n');
            for (String n : promotions) sw.append("// registers: ").append(n).append('\n');
            new ClassReader(bytes).accept(new TraceClassVisitor(null, new Textifier(), new PrintWriter(sw)), 0);
            text = t = sw.toString();
        }
        return t;
    }
}
