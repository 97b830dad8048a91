package dev.kiln.cuda;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.Measurers;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What the GPU measurer runs every program of a task on: the task's arguments (the parameters of
 * its default lowering), inputs drawn with {@code fillRandom(seed + i)} for input {@code i} (the
 * convention of Kiln's other measurers), and, when correctness is checked, the outputs the
 * reference {@link Interpreter} computes from them. Outputs are filled with other random values
 * before a checked run, so elements a program never writes show. Owns its arrays.
 */
final class GpuWorkload implements AutoCloseable {
    static final long POISON_SEED = 0x5eed_dead_beefL;

    private final List<Buffer> params;
    private final int inputs;
    private final long seed;
    private final List<NDArray> inputArrays = new ArrayList<>();
    private final List<NDArray> references = new ArrayList<>();
    /** Whether the task casts floats to integers: its integer outputs are checked within one step. */
    private boolean rounded;
    /** Host arrays of the outputs: the poison uploaded before a checked run, and where results come back. */
    private final List<NDArray> poison = new ArrayList<>(), results = new ArrayList<>();
    /** The arguments on the device, uploaded once per device epoch. */
    private DeviceArgs resident;

    private GpuWorkload(List<Buffer> params, int inputs, long seed) {
        this.params = List.copyOf(params);
        this.inputs = inputs;
        this.seed = seed;
    }

    static GpuWorkload of(SearchTask task, long seed, boolean withReference) {
        PrimFunc reference = Measurers.referenceProgram(task);
        GpuWorkload w = new GpuWorkload(reference.params(), task.dag().inputs().size(), seed);
        w.rounded = Measurers.roundsFloats(task.dag());
        for (int i = 0; i < w.inputs; i++) {
            Buffer p = reference.params().get(i);
            w.inputArrays.add(NDArray.allocate(p).fillRandom(seed + i));
        }
        if (withReference) {
            NDArray[] args = w.arrays(reference.params());
            try {
                Interpreter.run(reference, args);
                for (int i = w.inputs; i < args.length; i++) w.references.add(args[i].copy());
            } catch (RuntimeException e) {
                w.close();
                throw new KilnException(
                        "task " + task.workloadKey() + ": the interpreter cannot compute the reference output"
                                + " on the seeded inputs (seed " + seed + "): " + e.getMessage());
            } finally {
                for (NDArray a : args) a.close();
            }
        }
        return w;
    }

    /**
     * The workload of a program lowered elsewhere: its parameters, the {@code inputs} input arrays of {@code args}
     * (copied) and the reference outputs (copied; empty: no check).
     */
    static GpuWorkload of(List<Buffer> params, NDArray[] args, int inputs, List<NDArray> references, long seed) {
        if (args.length != params.size() || inputs > args.length || inputs < 0) {
            throw new KilnException("a program with " + params.size() + " parameters got " + args.length
                    + " arguments, " + inputs + " of them inputs");
        }
        GpuWorkload w = new GpuWorkload(params, inputs, seed);
        for (int i = 0; i < inputs; i++) w.inputArrays.add(args[i].copy());
        for (NDArray r : references) w.references.add(r.copy());
        return w;
    }

    boolean hasReferences() {
        return !references.isEmpty();
    }

    /**
     * The absolute tolerance for output {@code o}: at least one step for an integer output of a task that rounds
     * floats to integers ({@link Measurers#roundsFloats}), as the CPU measurers check it; {@code atol} otherwise.
     */
    double atol(int o, double atol) {
        return rounded && references.get(o).dtype().isInt() ? Math.max(1, atol) : atol;
    }

    /** The reference of output {@code o} (counting outputs only). */
    NDArray reference(int o) {
        return references.get(o);
    }

    int inputCount() {
        return inputs;
    }

    /** The name of parameter {@code i}. */
    String name(int i) {
        return params.get(i).name();
    }

    /** Fresh host arrays for a program's parameters (checked against the task's): inputs copied, outputs poisoned. */
    NDArray[] arrays(List<Buffer> programParams) {
        checkParams(programParams);
        NDArray[] out = new NDArray[params.size()];
        try {
            for (int i = 0; i < params.size(); i++) {
                Buffer got = programParams.get(i);
                out[i] = NDArray.allocate(got);
                if (i < inputs) out[i].copyFrom(inputArrays.get(i));
                else out[i].fillRandom(POISON_SEED + i);
            }
            return out;
        } catch (RuntimeException e) {
            for (NDArray a : out) if (a != null) a.close();
            throw e;
        }
    }

    /** Throws unless a measured program's parameters have the task's dtypes and shapes. */
    void checkParams(List<Buffer> programParams) {
        if (programParams.size() != params.size()) {
            throw new KilnException("the measured program takes " + programParams.size() + " parameters, the task has "
                    + params.size());
        }
        for (int i = 0; i < params.size(); i++) checkParam(i, programParams.get(i));
    }

    private void checkParam(int i, Buffer got) {
        Buffer want = params.get(i);
        if (want.dtype() != got.dtype() || !Arrays.equals(want.constShape(), got.constShape())) {
            throw new KilnException("parameter " + i + " of the measured program is " + got.name() + ": " + got.dtype()
                    + Arrays.toString(got.constShape()) + ", the task's is " + want.name() + ": " + want.dtype()
                    + Arrays.toString(want.constShape()));
        }
    }

    /** The arguments in device memory (inputs uploaded), made on first use and again after a device reset. */
    DeviceArgs resident(CudaDevice d) {
        if (resident != null && !resident.isStale()) return resident;
        DeviceArgs da = new DeviceArgs(d);
        try {
            for (int i = 0; i < params.size(); i++) {
                Buffer p = params.get(i);
                long bytes = CudaKernel.spanBytes(p);
                da.add(p, bytes);
                if (i < inputs) d.upload(inputArrays.get(i), da.pointer(p), bytes);
            }
        } catch (RuntimeException e) {
            da.close();
            throw e;
        }
        resident = da;
        return da;
    }

    List<DevicePointer> pointers(CudaDevice d) {
        DeviceArgs da = resident(d);
        return params.stream().map(p -> (DevicePointer) da.pointer(p)).toList();
    }

    List<Long> sizes() {
        return params.stream().map(CudaKernel::spanBytes).toList();
    }

    /** Fills the device outputs with poison, so elements a program does not write show. */
    void poisonOutputs(CudaDevice d) {
        DeviceArgs da = resident(d);
        for (int i = inputs; i < params.size(); i++) {
            Buffer p = params.get(i);
            if (poison.size() <= i - inputs) poison.add(NDArray.allocate(p).fillRandom(POISON_SEED + i));
            d.upload(poison.get(i - inputs), da.pointer(p), CudaKernel.spanBytes(p));
        }
    }

    /** The device outputs, copied into host arrays (kept and reused). */
    List<NDArray> downloadOutputs(CudaDevice d) {
        DeviceArgs da = resident(d);
        d.synchronize();
        for (int i = inputs; i < params.size(); i++) {
            Buffer p = params.get(i);
            if (results.size() <= i - inputs) results.add(NDArray.allocate(p));
            d.download(da.pointer(p), results.get(i - inputs), CudaKernel.spanBytes(p));
        }
        return results;
    }

    @Override
    public void close() {
        if (resident != null && !resident.isStale()) resident.close();
        inputArrays.forEach(NDArray::close);
        references.forEach(NDArray::close);
        poison.forEach(NDArray::close);
        results.forEach(NDArray::close);
    }
}
