package dev.kiln.cuda;

import dev.kiln.ir.KilnException;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * Whether this machine can run CUDA kernels, probed once per process through JCuda's driver
 * binding. JCuda's native library needs {@code libcuda.so.1} (the driver); without it the first
 * use of {@link JCudaDriver} throws a {@link LinkageError}, which the probe catches: afterwards
 * no JCuda class is touched again. Then {@link #status()} says why there is no GPU and
 * {@link #require()} throws a {@link KilnException} saying so.
 */
public final class CudaDriver {
    private CudaDriver() {}

    /**
     * The probe's result.
     *
     * @param available      whether the driver loaded, initialised and has at least one device
     * @param reason         why not (null when available)
     * @param driverVersion  the driver's CUDA version, e.g. 13000 for 13.0 (0 when unknown)
     * @param devices        the number of devices (0 when unknown)
     */
    public record Status(boolean available, String reason, int driverVersion, int devices) {
        @Override
        public String toString() {
            return available
                    ? "CUDA driver " + driverVersion / 1000 + "." + driverVersion % 1000 / 10 + ", " + devices
                            + " device(s)"
                    : reason;
        }
    }

    /** The message every GPU-only operation gives without a driver. */
    public static final String NO_DRIVER = "no CUDA driver (libcuda.so.1) on this machine";

    private static final class Holder {
        static final Status STATUS = probe();
    }

    public static Status status() {
        return Holder.STATUS;
    }

    /** Throws {@link KilnException} with the probe's reason unless a device can be used. */
    public static void require() {
        Status s = status();
        if (!s.available()) throw new KilnException(s.reason());
    }

    private static Status probe() {
        try {
            int rc = JCudaDriver.cuInit(0);
            if (rc != CUresult.CUDA_SUCCESS) {
                return new Status(
                        false, "the CUDA driver is installed but cuInit failed: " + CUresult.stringFor(rc), 0, 0);
            }
            int[] version = new int[1], count = new int[1];
            CudaDriverException.check(JCudaDriver.cuDriverGetVersion(version), "cuDriverGetVersion");
            CudaDriverException.check(JCudaDriver.cuDeviceGetCount(count), "cuDeviceGetCount");
            if (count[0] == 0)
                return new Status(false, "the CUDA driver " + version[0] + " sees no device", version[0], 0);
            return new Status(true, null, version[0], count[0]);
        } catch (LinkageError e) {
            return new Status(false, NO_DRIVER + " (JCuda: " + firstLine(e) + ")", 0, 0);
        } catch (RuntimeException e) {
            return new Status(false, "the CUDA driver could not be initialised: " + e.getMessage(), 0, 0);
        }
    }

    private static String firstLine(Throwable e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        return e.getClass().getSimpleName() + ": " + (nl < 0 ? m : m.substring(0, nl));
    }
}
