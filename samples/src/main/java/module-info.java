/**
 * Kiln's samples, an application rather than a library: the operator job ({@code MainJob}), the README's examples
 * ({@code .examples}), the operator catalogue that writes docs/OPERATORS.md ({@code .docs}) and the sample JMH
 * benchmark ({@code .jmh}). It exports {@code .jmh}, whose {@code KernelBenchmark} and {@code KernelInputs} a user's
 * own JMH benchmarks build on (README, "JMH"); it opens to the frameworks that reflect on it what they need.
 */
@SuppressWarnings("requires-automatic") // JMH's jar has no module name (jmh.core is derived from the file name)
module dev.kiln.samples {
    // KernelBenchmark and KernelInputs name lowering's CompiledKernel and NDArray
    requires transitive dev.kiln.autoschedule;
    requires dev.kiln.jit;
    requires dev.kiln.cuda;
    requires org.bytedeco.javacpp;
    requires org.bytedeco.openblas;
    requires info.picocli;
    requires jmh.core;

    // KernelBenchmark and KernelInputs: the base of a user's JMH benchmarks
    exports dev.kiln.samples.jmh;

    // MainJob's command line: picocli reads and sets its annotated fields
    opens dev.kiln.samples to
            info.picocli;
    // JMH's runner loads the generated harness by name and sets @Param fields of the benchmark state
    opens dev.kiln.samples.jmh to
            jmh.core;
    opens dev.kiln.samples.jmh.jmh_generated to
            jmh.core;
}
