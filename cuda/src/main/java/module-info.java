/**
 * The CUDA backend: the JCuda driver, kernels and the GPU measurer ({@code dev.kiln.cuda}),
 * CUDA C code generation ({@code .codegen}) and NVRTC/nvcc compilation ({@code .compile}); all three
 * are exported because the backend's options and a kernel's generated module are API. Both
 * services are provided for {@code ServiceLoader}.
 */
@SuppressWarnings("requires-automatic") // JCuda's jars have no module name
module dev.kiln.cuda {
    requires transitive dev.kiln.autoschedule;
    requires jcuda;
    requires jcublas;

    exports dev.kiln.cuda;
    // CudaBackend takes CudaOptions, CudaKernel shows its CudaModule and compiler
    exports dev.kiln.cuda.codegen;
    exports dev.kiln.cuda.compile;

    provides dev.kiln.target.Backend with
            dev.kiln.cuda.CudaBackend;
    provides dev.kiln.autoschedule.measure.MeasurerProvider with
            dev.kiln.cuda.CudaMeasurerProvider;
}
