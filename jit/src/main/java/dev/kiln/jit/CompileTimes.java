package dev.kiln.jit;

/**
 * Where the time of one LLVM compile went, in milliseconds: parsing the IR text, verifying and
 * optimising it, and code generation plus linking in the JIT. (Generating the IR text is timed by
 * the backend.)
 */
record CompileTimes(double parseMs, double optimizeMs, double codegenMs) {
    double totalMs() {
        return parseMs + optimizeMs + codegenMs;
    }
}
