package dev.kiln.cuda;

import static dev.kiln.cuda.CudaDriverException.check;

import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CudaTarget;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.locks.ReentrantLock;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUjit_option;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;
import jcuda.driver.JITOptions;

/**
 * One CUDA device and its primary context (the context the runtime API and cuBLAS use too), for
 * the whole process: device memory, PTX modules, copies and event timing through JCuda's driver
 * binding. Every operation makes the context current on the calling thread first and runs under
 * {@link #lock()}, so kernels may be called from several threads. JCuda types stay inside the
 * cuda module.
 *
 * <p>After a sticky error (a kernel that faults, see {@link CudaDriverException#isSticky()}) the
 * context is unusable: {@link #reset()} destroys it and starts a new one; every module and buffer
 * of the old one is gone, which {@link #epoch()} lets their owners notice.
 */
public final class CudaDevice {
    private static volatile CudaDevice first;

    private final int ordinal;
    private final CUdevice device = new CUdevice();
    private final ReentrantLock lock = new ReentrantLock();
    private CUcontext context = new CUcontext();
    private volatile int epoch;
    private final String name;
    private final CudaTarget target;
    private final int multiprocessors;

    private CudaDevice(int ordinal) {
        this.ordinal = ordinal;
        check(JCudaDriver.cuDeviceGet(device, ordinal), "cuDeviceGet(" + ordinal + ")");
        check(JCudaDriver.cuDevicePrimaryCtxRetain(context, device), "cuDevicePrimaryCtxRetain");
        byte[] n = new byte[256];
        check(JCudaDriver.cuDeviceGetName(n, n.length, device), "cuDeviceGetName");
        int len = 0;
        while (len < n.length && n[len] != 0) len++;
        this.name = new String(n, 0, len, StandardCharsets.US_ASCII);
        int major = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        int minor = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        this.target = new CudaTarget(
                "sm_" + major + minor,
                attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
                attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
                attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_WARP_SIZE));
        this.multiprocessors = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    }

    /**
     * Device 0, opened on first use; throws {@link KilnException} with the driver probe's reason when there is none.
     */
    public static CudaDevice first() {
        CudaDevice d = first;
        if (d == null) {
            synchronized (CudaDevice.class) {
                d = first;
                if (d == null) {
                    CudaDriver.require();
                    d = new CudaDevice(0);
                    first = d;
                }
            }
        }
        return d;
    }

    private int attribute(int attr) {
        int[] v = new int[1];
        check(JCudaDriver.cuDeviceGetAttribute(v, attr, device), "cuDeviceGetAttribute(" + attr + ")");
        return v[0];
    }

    public String name() {
        return name;
    }

    public int ordinal() {
        return ordinal;
    }

    public int multiprocessors() {
        return multiprocessors;
    }

    /** The device as a target: its compute capability, threads and static shared memory per block, warp size. */
    public CudaTarget target() {
        return target;
    }

    /** Increases at every {@link #reset()}: modules and buffers of an older epoch no longer exist. */
    public int epoch() {
        return epoch;
    }

    /** The lock every device operation holds; hold it across several operations to keep them together. */
    public ReentrantLock lock() {
        return lock;
    }

    /** Makes the context current on this thread (call under {@link #lock()}). */
    void makeCurrent() {
        check(JCudaDriver.cuCtxSetCurrent(context), "cuCtxSetCurrent");
    }

    /** Runs {@code body} under the lock with the context current. */
    <T> T with(java.util.function.Supplier<T> body) {
        lock.lock();
        try {
            makeCurrent();
            return body.get();
        } finally {
            lock.unlock();
        }
    }

    void run(Runnable body) {
        with(() -> {
            body.run();
            return null;
        });
    }

    /** Destroys the context (after a sticky error) and makes a fresh one; every module and buffer is lost. */
    public void reset() {
        lock.lock();
        try {
            epoch++;
            check(JCudaDriver.cuDevicePrimaryCtxReset(device), "cuDevicePrimaryCtxReset");
            JCudaDriver.cuDevicePrimaryCtxRelease(device);
            context = new CUcontext();
            check(JCudaDriver.cuDevicePrimaryCtxRetain(context, device), "cuDevicePrimaryCtxRetain");
        } finally {
            lock.unlock();
        }
    }

    /** Waits for all work on the device; throws the error of a failed kernel. */
    public void synchronize() {
        run(() -> check(JCudaDriver.cuCtxSynchronize(), "cuCtxSynchronize"));
    }

    // ---- memory --------------------------------------------------------------------------

    /** Device memory of {@code bytes} bytes (at least 1), aligned to 256 bytes. */
    DevicePointer alloc(long bytes) {
        return with(() -> {
            DevicePointer p = new DevicePointer();
            check(JCudaDriver.cuMemAlloc(p, Math.max(1, bytes)), "cuMemAlloc(" + bytes + " bytes)");
            return p;
        });
    }

    void free(CUdeviceptr p, int allocatedEpoch) {
        if (allocatedEpoch != epoch) return; // freed with its context
        run(() -> check(JCudaDriver.cuMemFree(p), "cuMemFree"));
    }

    /** Copies are made in pieces a ByteBuffer can address. */
    private static final long CHUNK = 1L << 30;

    /** Copies {@code bytes} bytes of an array's memory to the device. */
    void upload(NDArray a, CUdeviceptr dst, long bytes) {
        requireSpan(a, bytes);
        run(() -> {
            for (long off = 0; off < bytes; off += CHUNK) {
                long n = Math.min(CHUNK, bytes - off);
                check(
                        JCudaDriver.cuMemcpyHtoD(
                                dst.withByteOffset(off),
                                Pointer.to(a.segment().asSlice(off, n).asByteBuffer()),
                                n),
                        "cuMemcpyHtoD");
            }
        });
    }

    /** Copies {@code bytes} bytes from the device into an array's memory. */
    void download(CUdeviceptr src, NDArray a, long bytes) {
        requireSpan(a, bytes);
        run(() -> {
            for (long off = 0; off < bytes; off += CHUNK) {
                long n = Math.min(CHUNK, bytes - off);
                check(
                        JCudaDriver.cuMemcpyDtoH(
                                Pointer.to(a.segment().asSlice(off, n).asByteBuffer()), src.withByteOffset(off), n),
                        "cuMemcpyDtoH");
            }
        });
    }

    void zero(CUdeviceptr p, long bytes) {
        run(() -> check(JCudaDriver.cuMemsetD8(p, (byte) 0, bytes), "cuMemsetD8"));
    }

    private static void requireSpan(NDArray a, long bytes) {
        if (a.segment().byteSize() < bytes) {
            throw new KilnException("array " + a + " spans " + a.segment().byteSize() + " bytes, less than the " + bytes
                    + " its buffer needs");
        }
    }

    // ---- modules and timing ----------------------------------------------------------------

    /**
     * Loads PTX (the driver compiles it for this device). When that fails, the load is tried
     * again with the JIT's error log requested, and the log goes into the exception.
     */
    CUmodule load(String ptx, String what) {
        return with(() -> {
            byte[] text = (ptx + "\0").getBytes(StandardCharsets.US_ASCII);
            CUmodule m = new CUmodule();
            int rc = JCudaDriver.cuModuleLoadData(m, text);
            if (rc == 0) return m;
            String log;
            try {
                JITOptions o = new JITOptions();
                o.putBytes(CUjit_option.CU_JIT_ERROR_LOG_BUFFER, new byte[16384]);
                JCudaDriver.cuModuleLoadDataJIT(new CUmodule(), Pointer.to(text), o);
                log = o.getString(CUjit_option.CU_JIT_ERROR_LOG_BUFFER);
            } catch (RuntimeException e) {
                log = "(no JIT log: " + e.getMessage() + ")";
            }
            throw new KilnException("loading the PTX of " + what + " on " + name + " failed: "
                    + new CudaDriverException("cuModuleLoadData", rc).getMessage() + "\n" + log);
        });
    }

    void unload(CUmodule m, int loadedEpoch) {
        if (loadedEpoch != epoch) return;
        run(() -> check(JCudaDriver.cuModuleUnload(m), "cuModuleUnload"));
    }

    /** A pair of events recorded around {@code work}; returns the elapsed GPU time in milliseconds. */
    float time(Runnable work) {
        return with(() -> {
            CUevent start = new CUevent(), stop = new CUevent();
            check(JCudaDriver.cuEventCreate(start, CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate");
            check(JCudaDriver.cuEventCreate(stop, CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate");
            try {
                check(JCudaDriver.cuEventRecord(start, null), "cuEventRecord");
                work.run();
                check(JCudaDriver.cuEventRecord(stop, null), "cuEventRecord");
                check(JCudaDriver.cuEventSynchronize(stop), "cuEventSynchronize");
                float[] ms = new float[1];
                check(JCudaDriver.cuEventElapsedTime(ms, start, stop), "cuEventElapsedTime");
                return ms[0];
            } finally {
                JCudaDriver.cuEventDestroy(start);
                JCudaDriver.cuEventDestroy(stop);
            }
        });
    }

    @Override
    public String toString() {
        return name + " (" + target.arch() + ", " + multiprocessors + " SMs)";
    }
}
