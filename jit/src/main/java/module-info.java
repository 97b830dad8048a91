/**
 * The CPU backends: LLVM through Bytedeco's LLVM C API and ORC ({@code dev.kiln.jit}), and the pure-JVM
 * backend ({@code dev.kiln.jit.jvm}, ASM and the Vector API). Users reach them through
 * {@code Backend.forTarget}; the packages are exported for the compiled kernel types and the JIT
 * options, and the backends are provided as services.
 */
@SuppressWarnings("requires-automatic") // commons-math3 has no module name
module dev.kiln.jit {
    requires transitive dev.kiln.lowering;
    requires commons.math3;
    requires org.bytedeco.javacpp;
    requires org.bytedeco.llvm;
    requires org.objectweb.asm;
    // the JVM backend keeps C1 off its kernels through the DiagnosticCommand MBean (C1Exclusion)
    requires java.management;
    requires org.objectweb.asm.tree;
    requires org.objectweb.asm.util;
    // the JVM backend's generated classes call the Vector API when the JVM runs with it
    requires static jdk.incubator.vector;

    exports dev.kiln.jit;
    exports dev.kiln.jit.jvm;

    provides dev.kiln.target.Backend with
            dev.kiln.jit.LlvmBackend,
            dev.kiln.jit.jvm.JvmBackend;
}
