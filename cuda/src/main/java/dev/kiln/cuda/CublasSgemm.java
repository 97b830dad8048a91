package dev.kiln.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.kiln.cuda.compile.NvrtcLibrary;
import dev.kiln.ir.KilnException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import jcuda.Pointer;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasOperation;

/**
 * cuBLAS's single-precision GEMM on row-major matrices, the vendor baseline of the GPU check:
 * through JCublas (org.jcuda:jcublas 12.6.0, which needs {@code libcublas.so.12}) when it loads,
 * else through Panama against the newest {@code libcublas.so.*} found where NVRTC is looked for
 * (CUDA 13 machines have {@code libcublas.so.13}). {@link #name()} says which.
 * {@code C[m, n] = A[m, k] * B[k, n]} is computed as cuBLAS's column-major
 * {@code C^T = B^T * A^T}. Runs on the device's primary context, the one {@link CudaDevice} uses.
 * {@link #runHalf} is cublasGemmEx with float16 inputs on Tensor Cores, {@link #runTf32} with float32
 * inputs on TF32 Tensor Cores.
 */
final class CublasSgemm implements AutoCloseable {
    private final String name;
    private final cublasHandle jcublas;
    private final MethodHandle sgemm, destroy;
    /** cublasGemmEx through Panama; null with JCublas, or when the library lacks it. */
    private MethodHandle gemmEx;

    private final MemorySegment handle;
    private final Arena arena = Arena.ofShared();

    private CublasSgemm(
            String name, cublasHandle jcublas, MethodHandle sgemm, MethodHandle destroy, MemorySegment handle) {
        this.name = name;
        this.jcublas = jcublas;
        this.sgemm = sgemm;
        this.destroy = destroy;
        this.handle = handle;
    }

    /** Opens cuBLAS on the device (its context must be current: call under {@link CudaDevice#with}). */
    static CublasSgemm open() {
        String jcublasProblem;
        try {
            cublasHandle h = new cublasHandle();
            int rc = JCublas2.cublasCreate(h);
            if (rc == 0) return new CublasSgemm("cuBLAS (JCublas 12.6.0)", h, null, null, null);
            jcublasProblem = "cublasCreate returned " + rc;
        } catch (LinkageError e) {
            jcublasProblem = e.getClass().getSimpleName() + ": "
                    + String.valueOf(e.getMessage()).lines().findFirst().orElse("");
        }
        NvrtcLibrary.Candidate lib = NvrtcLibrary.newest("libcublas")
                .orElseThrow(() -> new KilnException("no cuBLAS: JCublas failed (" + "libcublas.so.12 needed"
                        + ") and no libcublas.so.* was found"));
        try {
            Path dir = lib.path().getParent();
            int major = lib.version().getFirst();
            Path lt = dir.resolve("libcublasLt.so." + major);
            if (java.nio.file.Files.exists(lt)) SymbolLookup.libraryLookup(lt, Arena.global());
            SymbolLookup l = SymbolLookup.libraryLookup(lib.path(), Arena.global());
            Linker linker = Linker.nativeLinker();
            MethodHandle create = linker.downcallHandle(
                    l.find("cublasCreate_v2").orElseThrow(), FunctionDescriptor.of(JAVA_INT, ADDRESS));
            MethodHandle gemm = linker.downcallHandle(
                    l.find("cublasSgemm_v2").orElseThrow(),
                    FunctionDescriptor.of(
                            JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG,
                            JAVA_INT, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
            MethodHandle destroy = linker.downcallHandle(
                    l.find("cublasDestroy_v2").orElseThrow(), FunctionDescriptor.of(JAVA_INT, ADDRESS));
            MethodHandle ex = l.find("cublasGemmEx")
                    .map(f -> linker.downcallHandle(
                            f,
                            FunctionDescriptor.of(
                                    JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS,
                                    JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG,
                                    JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT)))
                    .orElse(null);
            MemorySegment hp = Arena.global().allocate(ADDRESS);
            int rc = (int) create.invokeExact(hp);
            if (rc != 0) throw new KilnException("cublasCreate_v2 returned " + rc);
            CublasSgemm out = new CublasSgemm(
                    "cuBLAS " + lib.versionString() + " (Panama, " + lib.path() + "; JCublas: " + jcublasProblem + ")",
                    null,
                    gemm,
                    destroy,
                    hp.get(ADDRESS, 0));
            out.gemmEx = ex;
            return out;
        } catch (KilnException e) {
            throw e;
        } catch (Throwable t) {
            throw new KilnException("cannot use " + lib.path() + ": " + t + " (JCublas: " + jcublasProblem + ")");
        }
    }

    String name() {
        return name;
    }

    /** Enqueues {@code C = A * B} (row-major, m x k times k x n) on the default stream. */
    void run(int m, int n, int k, DeviceArgs d, dev.kiln.ir.Buffer a, dev.kiln.ir.Buffer b, dev.kiln.ir.Buffer c) {
        if (jcublas != null) {
            Pointer one = Pointer.to(new float[] {1f}), zero = Pointer.to(new float[] {0f});
            int rc = JCublas2.cublasSgemm(
                    jcublas,
                    cublasOperation.CUBLAS_OP_N,
                    cublasOperation.CUBLAS_OP_N,
                    n,
                    m,
                    k,
                    one,
                    d.pointer(b),
                    n,
                    d.pointer(a),
                    k,
                    zero,
                    d.pointer(c),
                    n);
            if (rc != 0) throw new KilnException("cublasSgemm returned " + rc);
            return;
        }
        try {
            MemorySegment one = arena.allocateFrom(JAVA_FLOAT, 1f), zero = arena.allocateFrom(JAVA_FLOAT, 0f);
            int rc = (int) sgemm.invokeExact(
                    handle, 0, 0, n, m, k, one, d.address(b), n, d.address(a), k, zero, d.address(c), n);
            if (rc != 0) throw new KilnException("cublasSgemm_v2 returned " + rc);
        } catch (KilnException e) {
            throw e;
        } catch (Throwable t) {
            throw new KilnException("cublasSgemm_v2 failed: " + t);
        }
    }

    /**
     * cudaDataType CUDA_R_16F, CUDA_R_32F; cublasComputeType_t CUBLAS_COMPUTE_32F,
     * CUBLAS_COMPUTE_32F_FAST_TF32; CUBLAS_GEMM_DEFAULT_TENSOR_OP.
     */
    private static final int R_16F = 2,
            R_32F = 0,
            COMPUTE_32F = 68,
            COMPUTE_32F_FAST_TF32 = 77,
            GEMM_DEFAULT_TENSOR_OP = 99;

    /**
     * Enqueues {@code C = A * B} with A, B and C float32, the inputs rounded to TF32 on Tensor Cores
     * (cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32): the vendor baseline of the TF32 matmul.
     */
    void runTf32(int m, int n, int k, DeviceArgs d, dev.kiln.ir.Buffer a, dev.kiln.ir.Buffer b, dev.kiln.ir.Buffer c) {
        gemmEx(m, n, k, d, a, b, c, R_32F, COMPUTE_32F_FAST_TF32);
    }

    /**
     * Enqueues {@code C = A * B} with A and B float16 and C float32, computed in float32 on Tensor
     * Cores (cublasGemmEx, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP): the vendor baseline
     * of the Tensor Core matmul.
     */
    void runHalf(int m, int n, int k, DeviceArgs d, dev.kiln.ir.Buffer a, dev.kiln.ir.Buffer b, dev.kiln.ir.Buffer c) {
        gemmEx(m, n, k, d, a, b, c, R_16F, COMPUTE_32F);
    }

    /** cublasGemmEx of row-major float {@code inType} A and B into float32 C, with {@code compute}. */
    private void gemmEx(
            int m,
            int n,
            int k,
            DeviceArgs d,
            dev.kiln.ir.Buffer a,
            dev.kiln.ir.Buffer b,
            dev.kiln.ir.Buffer c,
            int inType,
            int compute) {
        if (jcublas != null) {
            Pointer one = Pointer.to(new float[] {1f}), zero = Pointer.to(new float[] {0f});
            int rc = JCublas2.cublasGemmEx(
                    jcublas,
                    cublasOperation.CUBLAS_OP_N,
                    cublasOperation.CUBLAS_OP_N,
                    n,
                    m,
                    k,
                    one,
                    d.pointer(b),
                    inType,
                    n,
                    d.pointer(a),
                    inType,
                    k,
                    zero,
                    d.pointer(c),
                    R_32F,
                    n,
                    compute,
                    GEMM_DEFAULT_TENSOR_OP);
            if (rc != 0) throw new KilnException("cublasGemmEx returned " + rc);
            return;
        }
        if (gemmEx == null) throw new KilnException("this cuBLAS (" + name + ") has no cublasGemmEx");
        try {
            MemorySegment one = arena.allocateFrom(JAVA_FLOAT, 1f), zero = arena.allocateFrom(JAVA_FLOAT, 0f);
            int rc = (int) gemmEx.invokeExact(
                    handle,
                    0,
                    0,
                    n,
                    m,
                    k,
                    one,
                    d.address(b),
                    inType,
                    n,
                    d.address(a),
                    inType,
                    k,
                    zero,
                    d.address(c),
                    R_32F,
                    n,
                    compute,
                    GEMM_DEFAULT_TENSOR_OP);
            if (rc != 0) throw new KilnException("cublasGemmEx returned " + rc);
        } catch (KilnException e) {
            throw e;
        } catch (Throwable t) {
            throw new KilnException("cublasGemmEx failed: " + t);
        }
    }

    @Override
    public void close() {
        try {
            if (jcublas != null) JCublas2.cublasDestroy(jcublas);
            else {
                int ignored = (int) destroy.invokeExact(handle);
            }
        } catch (Throwable t) {
            // closing at the end of the check; nothing to recover
        } finally {
            arena.close();
        }
    }
}
