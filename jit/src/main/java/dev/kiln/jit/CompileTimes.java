package dev.kiln.jit;

/**
 * Where the time of one LLVM compile went, in milliseconds: parsing the IR text, verifying and
 * optimising it, machine-code generation (outside the JIT's lock; with
 * {@code -Dkiln.jit.codegenInLock=true} it happens at the link and counts there) and linking in
 * the JIT, under its lock. (Generating the IR text is timed by the backend.)
 */
record CompileTimes(double parseMs, double optimizeMs, double codegenMs, double linkMs) {
    double totalMs() {
        return parseMs + optimizeMs + codegenMs + linkMs;
    }
}
