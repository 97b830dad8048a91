package dev.kiln.cuda;

import static dev.kiln.cuda.CudaDriverException.check;

import dev.kiln.cuda.codegen.CudaModule;
import dev.kiln.cuda.codegen.Launch;
import dev.kiln.cuda.compile.CudaCompiler;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CudaTarget;
import dev.kiln.tir.PrimFunc;
import java.util.Arrays;
import java.util.List;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;

/**
 * A program compiled for a CUDA target: its CUDA C ({@link #source()}), PTX ({@link #ptx()}) and
 * launches. {@link #call} copies every argument to device memory, clears the temporaries, launches
 * the kernels in order, and copies the arguments the kernels write back, so it has the
 * interpreter's semantics on NDArrays. {@link #upload}, {@link #launch}, {@link #timeSeconds} and
 * {@link #download} split that up for timing kernels without the copies (the GPU measurer).
 *
 * <p>Compiling needs no GPU; the PTX module is loaded on the first call (again after a device
 * reset). Without a driver, {@link #call} throws {@link KilnException} saying there is no CUDA
 * driver. A kernel that divides by zero sets a device flag that the call reports.
 */
public final class CudaKernel implements CompiledKernel {
    private final PrimFunc func;
    private final CudaTarget target;
    private final CudaModule module;
    private final CudaCompiler.Result ptx;
    private volatile Loaded loaded;
    private volatile boolean closed;

    /** The module loaded on a device, in one epoch of its context. */
    private record Loaded(
            CudaDevice device, int epoch, CUmodule module, CUfunction[] functions, CUdeviceptr errorFlag) {}

    CudaKernel(PrimFunc func, CudaTarget target, CudaModule module, CudaCompiler.Result ptx) {
        this.func = func;
        this.target = target;
        this.module = module;
        this.ptx = ptx;
    }

    @Override
    public PrimFunc func() {
        return func;
    }

    @Override
    public CudaTarget target() {
        return target;
    }

    /** The CUDA C. */
    @Override
    public String source() {
        return module.source();
    }

    /** The PTX the driver loads. */
    public String ptx() {
        return ptx.ptx();
    }

    /** Which compiler made the PTX, whether it came from the cache, and how long it took. */
    public CudaCompiler.Result compileResult() {
        return ptx;
    }

    public CudaModule module() {
        return module;
    }

    public List<Launch> launches() {
        return module.launches();
    }

    @Override
    public void call(NDArray... args) {
        checkArguments(args);
        CudaDevice d = CudaDevice.first();
        d.lock().lock();
        try (DeviceArgs da = upload(args)) {
            launch(da);
            d.synchronize();
            checkErrorFlag();
            download(da, args);
        } catch (CudaDriverException e) {
            throw afterDriverError(d, e);
        } finally {
            d.lock().unlock();
        }
    }

    /** Device memory for a run: every parameter copied from {@code args}, the temporaries allocated. */
    public DeviceArgs upload(NDArray... args) {
        checkArguments(args);
        CudaDevice d = ensureLoaded().device();
        DeviceArgs da = new DeviceArgs(d);
        try {
            for (int i = 0; i < args.length; i++) {
                Buffer p = func.params().get(i).base();
                long bytes = spanBytes(p);
                da.add(p, bytes);
                d.upload(args[i], da.pointer(p), bytes);
            }
            for (Buffer t : module.temporaries()) da.add(t, spanBytes(t));
            return da;
        } catch (RuntimeException e) {
            da.close();
            throw e;
        }
    }

    /**
     * Device arguments over memory the caller owns and keeps (one buffer per parameter, in order,
     * each at least the parameter's span), with the temporaries allocated here: for running many
     * programs of one workload on inputs uploaded once (the GPU measurer).
     */
    DeviceArgs wrap(List<DevicePointer> params, List<Long> bytes) {
        if (params.size() != func.params().size()) {
            throw new KilnException("function '" + func.name() + "' takes "
                    + func.params().size() + " arguments, got " + params.size());
        }
        CudaDevice d = ensureLoaded().device();
        DeviceArgs da = new DeviceArgs(d);
        try {
            for (int i = 0; i < params.size(); i++) {
                Buffer p = func.params().get(i).base();
                if (bytes.get(i) < spanBytes(p)) {
                    throw new KilnException("argument " + i + " of '" + func.name() + "' has " + bytes.get(i)
                            + " bytes, '" + p.name() + "' spans " + spanBytes(p));
                }
                da.borrow(p, params.get(i), bytes.get(i));
            }
            for (Buffer t : module.temporaries()) da.add(t, spanBytes(t));
            return da;
        } catch (RuntimeException e) {
            da.close();
            throw e;
        }
    }

    /** Clears the temporaries and launches every kernel, in order, without waiting for them. */
    public void launch(DeviceArgs da) {
        Loaded l = ensureLoaded();
        l.device().run(() -> {
            for (Buffer t : module.temporaries()) l.device().zero(da.pointer(t), da.bytes(t));
            List<Launch> launches = module.launches();
            for (int k = 0; k < launches.size(); k++) {
                Launch launch = launches.get(k);
                Pointer[] ptrs = launch.args().stream()
                        .map(b -> Pointer.to(da.pointer(b)))
                        .toArray(Pointer[]::new);
                long[] g = launch.grid(), b = launch.block();
                check(
                        JCudaDriver.cuLaunchKernel(
                                l.functions()[k],
                                (int) g[0],
                                (int) g[1],
                                (int) g[2],
                                (int) b[0],
                                (int) b[1],
                                (int) b[2],
                                0,
                                null,
                                Pointer.to(ptrs),
                                null),
                        "cuLaunchKernel(" + launch + ")");
            }
        });
    }

    /** The mean time of {@code number} back-to-back {@link #launch}es, from CUDA events, in seconds. */
    public double timeSeconds(DeviceArgs da, int number) {
        if (number < 1) throw new KilnException("time at least one run, not " + number);
        CudaDevice d = ensureLoaded().device();
        float ms = d.time(() -> {
            for (int i = 0; i < number; i++) launch(da);
        });
        return ms / 1e3 / number;
    }

    /** Copies back, into {@code args}, every parameter a kernel writes (after the launches finished). */
    public void download(DeviceArgs da, NDArray... args) {
        CudaDevice d = ensureLoaded().device();
        d.synchronize();
        for (int i = 0; i < args.length; i++) {
            Buffer p = func.params().get(i).base();
            if (written(p)) d.download(da.pointer(p), args[i], da.bytes(p));
        }
    }

    /** Throws if a kernel divided by zero since the last check (and clears the flag). */
    public void checkErrorFlag() {
        if (!module.usesErrorFlag()) return;
        Loaded l = ensureLoaded();
        int[] flag = new int[1];
        l.device().run(() -> {
            check(JCudaDriver.cuMemcpyDtoH(Pointer.to(flag), l.errorFlag(), 4), "cuMemcpyDtoH(kiln_error)");
            if (flag[0] != 0) check(JCudaDriver.cuMemsetD8(l.errorFlag(), (byte) 0, 4), "cuMemsetD8(kiln_error)");
        });
        if (flag[0] != 0) {
            throw new KilnException("function '" + func.name() + "': integer division by zero in a CUDA kernel");
        }
    }

    private boolean written(Buffer p) {
        for (Launch l : module.launches()) {
            for (int a = 0; a < l.args().size(); a++)
                if (l.args().get(a) == p && l.writes().get(a)) return true;
        }
        return false;
    }

    /** After a sticky driver error the context is gone: reset the device and say what happened. */
    private KilnException afterDriverError(CudaDevice d, CudaDriverException e) {
        if (!e.isSticky()) return e;
        try {
            d.reset();
        } catch (RuntimeException r) {
            e.addSuppressed(r);
        }
        return new KilnException(
                "function '" + func.name() + "' failed on the GPU and the device was reset: " + e.getMessage(), e);
    }

    /**
     * Loads the PTX on the device now (otherwise the first call does): the driver's JIT compiles
     * it, and each kernel's registers are checked against the threads it launches. Throws
     * {@link KilnException} with the JIT's log, or the driver probe's reason without a GPU.
     */
    public void load() {
        ensureLoaded();
    }

    /** The module on the device, loaded on first use and again after a reset (under the device's lock). */
    private Loaded ensureLoaded() {
        CudaDevice d = CudaDevice.first();
        return d.with(() -> {
            if (closed) throw new KilnException("kernel '" + func.name() + "' is closed");
            if (loaded != null && loaded.epoch() == d.epoch()) return loaded;
            CUmodule m = d.load(ptx.ptx(), "function '" + func.name() + "'");
            List<Launch> launches = module.launches();
            CUfunction[] fns = new CUfunction[launches.size()];
            for (int k = 0; k < fns.length; k++) {
                fns[k] = new CUfunction();
                check(
                        JCudaDriver.cuModuleGetFunction(
                                fns[k], m, launches.get(k).name()),
                        "cuModuleGetFunction(" + launches.get(k).name() + ")");
                checkResources(d, fns[k], launches.get(k));
            }
            CUdeviceptr flag = null;
            if (module.usesErrorFlag()) {
                flag = new CUdeviceptr();
                check(
                        JCudaDriver.cuModuleGetGlobal(flag, new long[1], m, CudaModule.ERROR_FLAG),
                        "cuModuleGetGlobal(kiln_error)");
            }
            loaded = new Loaded(d, d.epoch(), m, fns, flag);
            return loaded;
        });
    }

    /** Refuses a kernel whose registers leave room for fewer threads per block than it launches. */
    private void checkResources(CudaDevice d, CUfunction fn, Launch launch) {
        int[] max = new int[1], regs = new int[1];
        check(
                JCudaDriver.cuFuncGetAttribute(max, CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn),
                "cuFuncGetAttribute");
        check(
                JCudaDriver.cuFuncGetAttribute(regs, CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, fn),
                "cuFuncGetAttribute");
        long threads = launch.threadsPerBlock();
        if (threads > max[0]) {
            throw new KilnException("kernel " + launch.name() + " of function '" + func.name() + "' launches " + threads
                    + " threads per block, but with " + regs[0] + " registers per thread " + d.name() + " runs at most "
                    + max[0]);
        }
    }

    /** The bytes of a buffer's memory: its span (padding included) times the element size. */
    static long spanBytes(Buffer b) {
        long[] shape = b.constShape(), strides = b.constStrides();
        long span = 1;
        for (int i = 0; i < shape.length; i++) span = Math.addExact(span, Math.multiplyExact(shape[i] - 1, strides[i]));
        return Math.multiplyExact(span, b.dtype().bytes());
    }

    private void checkArguments(NDArray[] args) {
        List<Buffer> params = func.params();
        if (args.length != params.size()) {
            throw new KilnException("function '" + func.name() + "' takes " + params.size() + " argument(s) "
                    + params.stream().map(Buffer::name).toList() + ", got " + args.length);
        }
        for (int i = 0; i < args.length; i++) {
            Buffer p = params.get(i);
            NDArray a = args[i];
            String where = "function '" + func.name() + "', argument " + i + " ('" + p.name() + "'): ";
            if (a == null) throw new KilnException(where + "expected an array but got null");
            if (a.dtype() != p.dtype())
                throw new KilnException(where + "expected dtype " + p.dtype() + " but got " + a.dtype());
            if (!Arrays.equals(a.shape(), p.constShape())) {
                throw new KilnException(where + "expected shape " + Arrays.toString(p.constShape()) + " but got "
                        + Arrays.toString(a.shape()));
            }
            if (!Arrays.equals(a.strides(), p.constStrides())) {
                throw new KilnException(where + "expected strides " + Arrays.toString(p.constStrides()) + " but got "
                        + Arrays.toString(a.strides()));
            }
        }
    }

    /** Unloads the module (if it was loaded); later calls fail. Needs no driver when nothing was loaded. */
    @Override
    public void close() {
        Loaded l;
        synchronized (this) {
            if (closed) return;
            closed = true;
            l = loaded;
            loaded = null;
        }
        if (l != null) l.device().run(() -> l.device().unload(l.module(), l.epoch()));
    }
}
