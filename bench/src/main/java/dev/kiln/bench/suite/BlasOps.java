package dev.kiln.bench.suite;

import dev.kiln.ir.DType;
import dev.kiln.runtime.NDArray;
import dev.kiln.samples.OpenBlas;
import java.nio.ByteOrder;
import java.util.Map;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.openblas.global.openblas_nolapack;

/**
 * OpenBLAS on the one suite operator it has, GMM: row-major {@code cblas_sgemm} per batch
 * element on Kiln's own arrays (no copies). Every other operator is UNSUPPORTED (a BLAS has no
 * convolution, norm or softmax). The kernel column is {@code openblas_get_corename}; threads are
 * OPENBLAS_NUM_THREADS, set per child process, and {@link OpenBlas#setThreads}.
 */
final class BlasOps implements Baseline {

    @Override
    public String name() {
        return "openblas";
    }

    @Override
    public String describe() {
        return "OpenBLAS (org.bytedeco openblas 0.3.31-1.5.13) core " + OpenBlas.coreName() + ", OPENBLAS_CORETYPE="
                + System.getenv("OPENBLAS_CORETYPE") + ", OPENBLAS_NUM_THREADS="
                + System.getenv("OPENBLAS_NUM_THREADS");
    }

    @Override
    public Prepared prepare(SuiteWorkload w, Map<String, NDArray> in, long[] outDims) {
        if (!w.op().equals("GMM"))
            throw new Unsupported("OpenBLAS has no " + w.op() + " (a BLAS only has GEMM among these)");
        int b = (int) w.p(0), n = (int) w.p(1), m = (int) w.p(2), k = (int) w.p(3);
        FloatPointer x = pointer(in.get("X")), y = pointer(in.get("Y"));
        NDArray out = NDArray.allocate(DType.FLOAT32, outDims);
        FloatPointer z = pointer(out);
        String core = OpenBlas.coreName();
        return new Prepared() {
            @Override
            public void run() {
                for (int i = 0; i < b; i++) {
                    openblas_nolapack.cblas_sgemm(
                            openblas_nolapack.CblasRowMajor,
                            openblas_nolapack.CblasNoTrans,
                            openblas_nolapack.CblasNoTrans,
                            n,
                            m,
                            k,
                            1f,
                            x.getPointer((long) i * n * k),
                            k,
                            y.getPointer((long) i * k * m),
                            m,
                            0f,
                            z.getPointer((long) i * n * m),
                            m);
                }
            }

            @Override
            public NDArray output() {
                return out.copy();
            }

            @Override
            public String kernel() {
                return "cblas_sgemm x" + b + ", core " + core;
            }

            @Override
            public void close() {
                out.close();
            }
        };
    }

    private static FloatPointer pointer(NDArray a) {
        return new FloatPointer(
                a.segment().asByteBuffer().order(ByteOrder.nativeOrder()).asFloatBuffer());
    }
}
