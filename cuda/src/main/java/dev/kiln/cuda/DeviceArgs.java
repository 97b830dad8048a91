package dev.kiln.cuda;

import dev.kiln.ir.Buffer;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import jcuda.driver.CUdeviceptr;

/**
 * The device memory of one run of a {@link CudaKernel}: a buffer per parameter of the program and
 * per temporary, by base buffer. Made by {@link CudaKernel#upload}; kept across launches so that
 * timing measures kernels only; closing frees it.
 */
public final class DeviceArgs implements AutoCloseable {
    private final CudaDevice device;
    private final int epoch;
    private final Map<Buffer, CUdeviceptr> pointers = new IdentityHashMap<>();
    private final Map<Buffer, Long> bytes = new IdentityHashMap<>();
    private final List<Buffer> order = new ArrayList<>();
    private final java.util.Set<Buffer> borrowed = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
    private boolean closed;

    DeviceArgs(CudaDevice device) {
        this.device = device;
        this.epoch = device.epoch();
    }

    void add(Buffer b, long size) {
        DevicePointer p = device.alloc(size);
        pointers.put(b, p);
        bytes.put(b, size);
        order.add(b);
    }

    /** Uses memory someone else owns for {@code b}: it is not freed on close. */
    void borrow(Buffer b, DevicePointer p, long size) {
        pointers.put(b.base(), p);
        bytes.put(b.base(), size);
        borrowed.add(b.base());
    }

    CUdeviceptr pointer(Buffer b) {
        if (closed) throw new dev.kiln.ir.KilnException("these device arguments are closed");
        if (epoch != device.epoch()) {
            throw new dev.kiln.ir.KilnException(
                    "the device was reset since these arguments were uploaded; upload again");
        }
        CUdeviceptr p = pointers.get(b.base());
        if (p == null) throw new IllegalStateException("no device memory for buffer '" + b.name() + "'");
        return p;
    }

    long bytes(Buffer b) {
        return bytes.get(b.base());
    }

    /** The device address of a buffer's memory (for native libraries called through Panama). */
    long address(Buffer b) {
        return ((DevicePointer) pointer(b)).address();
    }

    /** Whether the device was reset since this memory was allocated (it is gone then). */
    boolean isStale() {
        return epoch != device.epoch();
    }

    /** Total device memory held, in bytes. */
    public long totalBytes() {
        return bytes.values().stream().mapToLong(Long::longValue).sum();
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        RuntimeException first = null;
        for (Buffer b : order) {
            if (borrowed.contains(b)) continue;
            try {
                device.free(pointers.get(b), epoch);
            } catch (RuntimeException e) {
                if (first == null) first = e;
            }
        }
        if (first != null) throw first;
    }
}
