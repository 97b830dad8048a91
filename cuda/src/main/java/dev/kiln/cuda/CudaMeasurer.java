package dev.kiln.cuda;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureLoop;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.Measurers;
import dev.kiln.autoschedule.measure.ProgramMeasurer;
import dev.kiln.autoschedule.measure.ScheduleLowerer;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The auto-scheduler's measurer on a CUDA GPU, in this process. For each schedule: lower it with
 * the GPU passes for the target's limits (threads per block, shared memory, vthreads: a program
 * over them is a {@link MeasureError#LOWER} before anything runs); generate CUDA C, compile it to
 * PTX and load it, checking each kernel's registers against its block size
 * ({@link MeasureError#COMPILE}); copy the task's seeded inputs to the device once, run the
 * program, compare its outputs with the interpreter's reference ({@link MeasureError#WRONG_RESULT});
 * then time the kernels alone with CUDA events (no copies), in the same {@link MeasureLoop} as the
 * CPU measurers: warm-up runs, {@code number} runs per repeat raised until a repeat lasts
 * {@code minRepeatMs}, {@code repeats} repeats ({@code warmupMs} does not apply). With
 * {@code flushCache}, every timed run follows a write of a buffer twice the size of the L2 cache
 * (outside the timed region) and is its own repeat.
 *
 * <p>A kernel that faults ({@link MeasureError#RUNTIME}) leaves the CUDA context unusable: the
 * device is reset and the batch goes on. A kernel slower than {@code timeoutSeconds} is a
 * {@link MeasureError#TIMEOUT} after its first run; one that never ends cannot be stopped from
 * inside the process (a GPU has no preemption a host thread could trigger), so the tuner should
 * keep tile sizes that make such programs impossible, as Ansor's do.
 */
public final class CudaMeasurer implements ProgramMeasurer {
    private static final long FLUSH_BYTES = 256L << 20;

    private final CudaTarget target;
    private final MeasureOptions options;
    private final CudaBackend backend = new CudaBackend();
    private final ScheduleLowerer lowerer;
    private final CudaDevice device;
    private final Map<String, GpuWorkload> workloads = new HashMap<>();
    private DeviceArgs flushBuffer;
    private boolean closed;

    private CudaMeasurer(CudaTarget target, MeasureOptions options) {
        this.target = target;
        this.options = options;
        this.lowerer = ScheduleLowerer.forTarget(target);
        this.device = CudaDevice.first();
        int cc = device.target().computeCapability();
        if (target.computeCapability() > cc) {
            throw new KilnException(
                    "cannot measure programs for " + target.arch() + " on " + device + ", which is sm_" + cc);
        }
    }

    /**
     * A measurer on this machine's first GPU for {@code target} (a {@link CudaTarget} the device can
     * run); throws {@link KilnException} without a driver or a device, saying why. The signature
     * fits {@code TuneOptions.MeasurerFactory}.
     */
    public static CudaMeasurer start(Target target, MeasureOptions options) {
        if (!(target instanceof CudaTarget c))
            throw new KilnException("the CUDA measurer measures CUDA targets, not '" + target + "'");
        return new CudaMeasurer(c, options);
    }

    @Override
    public Target target() {
        return target;
    }

    @Override
    public MeasureOptions options() {
        return options;
    }

    /** The device programs run on. */
    public CudaDevice device() {
        return device;
    }

    @Override
    public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
        if (closed) throw new KilnException("this measurer is closed");
        Measurers.checkTask(task, schedules, target);
        GpuWorkload w = workloads.computeIfAbsent(
                task.dag().workloadKey() + "|" + options.seed(),
                k -> GpuWorkload.of(task, options.seed(), options.checkCorrectness()));
        List<MeasureResult> out = new ArrayList<>();
        for (Schedule s : schedules) {
            long t0 = System.nanoTime();
            out.add(measureOne(task, s, w).withWallSeconds((System.nanoTime() - t0) / 1e9));
        }
        return out;
    }

    private MeasureResult measureOne(SearchTask task, Schedule schedule, GpuWorkload w) {
        PrimFunc func;
        try {
            func = lowerer.lower(task, schedule);
        } catch (RuntimeException | StackOverflowError e) {
            return MeasureResult.failed(MeasureError.LOWER, MeasureLoop.describe(e), 0, 0);
        }
        return measureLowered(func, w);
    }

    /**
     * Measures a program lowered elsewhere (by a cluster tuner, for this measurer's target), in the measuring child
     * JVM of a GPU worker: the same compile, check and timing as a schedule measured here.
     */
    @Override
    public MeasureResult measureProgram(PrimFunc func, NDArray[] args, int inputs, List<NDArray> references) {
        if (closed) throw new KilnException("this measurer is closed");
        long t0 = System.nanoTime();
        try (GpuWorkload w = GpuWorkload.of(func.params(), args, inputs, references, options.seed())) {
            return measureLowered(func, w).withWallSeconds((System.nanoTime() - t0) / 1e9);
        }
    }

    private MeasureResult measureLowered(PrimFunc func, GpuWorkload w) {
        long t0 = System.nanoTime();
        CudaKernel kernel;
        try {
            kernel = backend.compile(func, target);
            kernel.load();
        } catch (RuntimeException | LinkageError | StackOverflowError e) {
            if (e instanceof CudaDriverException d && d.isSticky()) device.reset();
            return MeasureResult.failed(
                    MeasureError.COMPILE, "cuda: " + MeasureLoop.describe(e), (System.nanoTime() - t0) / 1e9, 0);
        }
        double compileSeconds = (System.nanoTime() - t0) / 1e9;
        try (kernel) {
            w.checkParams(func.params());
            try (DeviceArgs da = kernel.wrap(w.pointers(device), w.sizes())) {
                return run(kernel, da, w, compileSeconds);
            }
        } catch (CudaDriverException e) {
            if (e.isSticky()) resetDevice(e);
            return MeasureResult.failed(MeasureError.RUNTIME, MeasureLoop.describe(e), compileSeconds, 0);
        } catch (RuntimeException e) {
            return MeasureResult.failed(MeasureError.RUNTIME, MeasureLoop.describe(e), compileSeconds, 0);
        }
    }

    /**
     * The GPU's part of the {@link MeasureLoop}: at most 2^20 runs per repeat, no warm-up by time
     * (launches return before the kernel ends), and a first run slower than the time-out is a
     * {@link MeasureError#TIMEOUT}, since no worker process enforces it.
     */
    static final MeasureLoop.Limits LIMITS = new MeasureLoop.Limits(1 << 20, false, true);

    private MeasureResult run(CudaKernel kernel, DeviceArgs da, GpuWorkload w, double compileSeconds) {
        return MeasureLoop.run(new GpuRun(kernel, da, w), options, LIMITS).toResult(compileSeconds);
    }

    /** One loaded program with its device arguments: runs and times it with CUDA events. */
    private final class GpuRun implements MeasureLoop.Device {
        private final CudaKernel kernel;
        private final DeviceArgs da;
        private final GpuWorkload w;

        GpuRun(CudaKernel kernel, DeviceArgs da, GpuWorkload w) {
            this.kernel = kernel;
            this.da = da;
            this.w = w;
        }

        @Override
        public boolean hasReferences() {
            return w.hasReferences();
        }

        @Override
        public void prepareCheck() {
            w.poisonOutputs(device);
        }

        @Override
        public double runChecked() {
            double seconds = kernel.timeSeconds(da, 1);
            kernel.checkErrorFlag();
            return seconds;
        }

        @Override
        public String compareOutputs() {
            List<NDArray> outs = w.downloadOutputs(device);
            for (int o = 0; o < outs.size(); o++) {
                Comparison c = outs.get(o).compareTo(w.reference(o), options.rtol(), w.atol(o, options.atol()));
                if (!c.ok())
                    return "output '" + w.name(w.inputCount() + o)
                            + "' differs from the reference (the interpreter, float32 sums in float64): " + c.report();
            }
            return null;
        }

        @Override
        public void launch() {
            kernel.launch(da);
        }

        @Override
        public double time(long number) {
            return kernel.timeSeconds(da, Math.toIntExact(number));
        }

        @Override
        public void flushCache() {
            flush();
        }

        @Override
        public void afterTiming() {
            kernel.checkErrorFlag();
        }

        @Override
        public void failed(RuntimeException e) {
            if (e instanceof CudaDriverException d && d.isSticky()) resetDevice(d);
        }
    }

    /** Writes a buffer larger than the L2 cache, so the next run starts with a cold cache. */
    private void flush() {
        if (flushBuffer == null || flushBuffer.isStale()) {
            flushBuffer = new DeviceArgs(device);
            flushBuffer.add(FLUSH_KEY, FLUSH_BYTES);
        }
        device.zero(flushBuffer.pointer(FLUSH_KEY), FLUSH_BYTES);
    }

    private static final dev.kiln.ir.Buffer FLUSH_KEY = dev.kiln.ir.Buffer.rowMajor(
            "l2_flush", dev.kiln.ir.DType.UINT8, List.of(FLUSH_BYTES), dev.kiln.ir.MemoryScope.GLOBAL);

    private void resetDevice(RuntimeException cause) {
        try {
            device.reset();
            flushBuffer = null;
        } catch (RuntimeException r) {
            cause.addSuppressed(r);
        }
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        workloads.values().forEach(GpuWorkload::close);
        workloads.clear();
        if (flushBuffer != null && !flushBuffer.isStale()) flushBuffer.close();
    }
}
