package dev.kiln.bench.cluster;

import dev.kiln.cuda.CudaDevice;
import dev.kiln.cuda.CudaDriver;
import dev.kiln.ir.KilnException;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;

/**
 * The target a worker advertises (its worker key: a job meets only the workers of its exact target string) and what
 * the worker tells about its device. A CPU worker advertises this machine's CPU (features and cores) unless told a
 * CPU target. A CUDA worker ({@code --target cuda}) probes the driver and advertises its first GPU's target
 * (architecture, hence compute capability, and limits), so a job for sm_90 never reaches an sm_80 worker; a full
 * CUDA target string is advertised as given when the GPU can run it (its compute capability at most the device's). A
 * machine without the driver or a GPU refuses to start a CUDA worker, saying what is missing.
 *
 * @param target      the advertised target string
 * @param description what the worker prints about its device (the GPU model for CUDA)
 */
record WorkerTarget(String target, String description) {
    /** The target of a worker started with {@code --target option} ({@code null}: not given). */
    static WorkerTarget of(String option, boolean simulate) {
        if (simulate) {
            String t = option == null ? "simulated" : "simulated:" + option;
            return new WorkerTarget(t, "simulated measurements");
        }
        if (option == null) return cpu(Target.cpu());
        if (option.strip().equals("cuda")) return cuda(null);
        Target t = Target.parse(option);
        return t instanceof CudaTarget c ? cuda(c) : cpu(t);
    }

    private static WorkerTarget cpu(Target t) {
        return new WorkerTarget(t.toString(), "CPU, " + Runtime.getRuntime().availableProcessors() + " cores");
    }

    /** A CUDA worker's target: {@code wanted}, or the device's own when null; throws without a usable GPU. */
    private static WorkerTarget cuda(CudaTarget wanted) {
        CudaDriver.Status s = CudaDriver.status();
        if (!s.available()) {
            throw new KilnException("target '" + (wanted == null ? "cuda" : wanted) + "': this machine cannot measure "
                    + "CUDA programs: " + s.reason() + " (a CUDA worker needs the NVIDIA driver's libcuda.so.1 and a "
                    + "GPU; start a CPU worker here instead)");
        }
        CudaDevice d = CudaDevice.first();
        CudaTarget own = d.target();
        if (wanted == null) return new WorkerTarget(own.toString(), d.toString());
        if (wanted.computeCapability() > own.computeCapability()) {
            throw new KilnException("target '" + wanted + "': the GPU " + d + " is sm_" + own.computeCapability()
                    + " and cannot run programs for " + wanted.arch());
        }
        return new WorkerTarget(wanted.toString(), d.toString());
    }
}
