package dev.kiln.cuda;

import dev.kiln.ir.KilnException;
import jcuda.driver.CUresult;

/**
 * A CUDA driver call that returned an error: the call, the {@code CUresult} and its name. Some
 * errors ({@link #isSticky()}: an illegal address, a failed launch, ...) leave the context
 * unusable; the device must then be reset ({@link CudaDevice#reset()}).
 */
public final class CudaDriverException extends KilnException {
    private final int code;

    CudaDriverException(String call, int code) {
        super(call + " failed: " + CUresult.stringFor(code) + " (" + code + ")");
        this.code = code;
    }

    /** The CUresult code. */
    public int code() {
        return code;
    }

    /** Whether the error corrupts the context, so that every later call fails until a reset. */
    public boolean isSticky() {
        return code == CUresult.CUDA_ERROR_ILLEGAL_ADDRESS
                || code == CUresult.CUDA_ERROR_LAUNCH_FAILED
                || code == CUresult.CUDA_ERROR_MISALIGNED_ADDRESS
                || code == CUresult.CUDA_ERROR_ILLEGAL_INSTRUCTION
                || code == CUresult.CUDA_ERROR_INVALID_ADDRESS_SPACE
                || code == CUresult.CUDA_ERROR_INVALID_PC
                || code == CUresult.CUDA_ERROR_HARDWARE_STACK_ERROR
                || code == CUresult.CUDA_ERROR_ASSERT
                || code == CUresult.CUDA_ERROR_LAUNCH_TIMEOUT
                || code == CUresult.CUDA_ERROR_ECC_UNCORRECTABLE;
    }

    /** Throws for a non-zero result. */
    static void check(int rc, String call) {
        if (rc != CUresult.CUDA_SUCCESS) throw new CudaDriverException(call, rc);
    }
}
