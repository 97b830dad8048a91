package dev.kiln.cuda;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.ScheduleLowerer;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.cuda.codegen.CudaCodegen;
import dev.kiln.cuda.compile.CudaCompiler;
import dev.kiln.cuda.compile.Nvrtc;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.lower.GpuPasses;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvGemm;
import dev.kiln.nn.ConvParams;
import dev.kiln.nn.Linalg;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.SimpleGpuSchedule;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The GPU check of scripts/gpu-check.sh: tunes a 4096 matmul, a conv2d layer, a float16 -> float32
 * Tensor Core matmul (4096, against cublasGemmEx with tensor ops) and the conv2d layer as a float16 implicit GEMM
 * on Tensor Cores (against cublasGemmEx of its GEMM shape) on this machine's
 * GPU on a short budget, checks each tuned kernel against a plain GPU kernel of the same
 * computation (one thread per output element) on random inputs, times it with CUDA events, and
 * prints a table of GFLOP/s next to cuBLAS measured in the same run (sgemm of the same shape; for
 * the conv2d, sgemm of its im2col GEMM shape, the im2col itself not counted). {@code --dry-run}
 * needs no GPU: it builds the tasks, samples programs, lowers them, generates and (when a CUDA
 * compiler is there) compiles their CUDA C, and prints what a real run would do. {@code --tf32}
 * adds a float32 matmul on TF32 Tensor Cores (the target with {@code -tf32=1}), timed against
 * cublasGemmEx with {@code CUBLAS_COMPUTE_32F_FAST_TF32}.
 *
 * <pre>
 * GpuCheck [--dry-run] [--tf32] [--seconds S] [--trials N] [--log FILE] [--matmul N] [--conv N,C,H,W,K,R,S,PAD]
 * </pre>
 */
public final class GpuCheck {
    private GpuCheck() {}

    /** How a workload's inputs reach the Tensor Cores, and so which cuBLAS call is its baseline. */
    enum Inputs {
        /** float32 on CUDA cores: cublasSgemm. */
        FLOAT32,
        /** float16 on Tensor Cores, float32 output: cublasGemmEx with tensor ops. */
        HALF,
        /** float32 rounded to TF32 on Tensor Cores: cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32. */
        TF32;

        /** Whether the workload is the Tensor Core sketch's (the dry run samples only that sketch). */
        boolean tensorCores() {
            return this != FLOAT32;
        }
    }

    /** A workload: its computation, the GEMM shape cuBLAS times, and its inputs' path. */
    record Workload(String name, ComputeDAG dag, int[] gemm, Inputs inputs) {
        Workload(String name, ComputeDAG dag, int[] gemm) {
            this(name, dag, gemm, Inputs.FLOAT32);
        }

        /** The target the workload is tuned for: TF32 allowed for the TF32 one. */
        CudaTarget target(CudaTarget base) {
            return inputs == Inputs.TF32 ? base.withTf32(true) : base;
        }
    }

    record Row(String name, double gflop, double kilnMs, double vendorMs, String check, int trials) {}

    public static void main(String[] args) throws Exception {
        boolean dry = false, tf32 = false;
        double seconds = 60;
        int trials = 2000, mm = 4096;
        Path log = Path.of("kiln-gpu-check.jsonl");
        int[] conv = {16, 64, 56, 56, 64, 3, 3, 1};
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--dry-run" -> dry = true;
                case "--tf32" -> tf32 = true;
                case "--seconds" -> seconds = Double.parseDouble(args[++i]);
                case "--trials" -> trials = Integer.parseInt(args[++i]);
                case "--log" -> log = Path.of(args[++i]);
                case "--matmul" -> mm = Integer.parseInt(args[++i]);
                case "--conv" ->
                    conv = java.util.Arrays.stream(args[++i].split(","))
                            .mapToInt(Integer::parseInt)
                            .toArray();
                default ->
                    throw new IllegalArgumentException("unknown option " + args[i]
                            + "; usage: GpuCheck [--dry-run] [--tf32] [--seconds S] [--trials N] [--log FILE] "
                            + "[--matmul N] [--conv N,C,H,W,K,R,S,PAD]");
            }
        }
        List<Workload> workloads =
                new ArrayList<>(List.of(matmul(mm), conv2d(conv), tensorCoreMatmul(mm), tensorCoreConv2d(conv)));
        if (tf32) workloads.add(tf32Matmul(mm));
        System.out.println("kiln gpu-check: " + CudaCompiler.describe() + "; " + CudaDriver.status());
        if (dry) {
            dryRun(workloads, seconds, trials);
            return;
        }
        CudaDevice device = CudaDevice.first();
        CudaTarget target = device.target();
        System.out.println("device: " + device + ", target " + target);
        List<Row> rows = new ArrayList<>();
        boolean ok = true;
        try (CublasSgemm cublas = device.with(CublasSgemm::open)) {
            System.out.println("vendor baseline: " + cublas.name());
            for (Workload w : workloads) {
                Row r = run(w, target, seconds, trials, log, cublas, device);
                rows.add(r);
                ok &= r.check().startsWith("ok");
            }
        }
        printTable(rows);
        if (!ok) System.exit(1);
    }

    static Workload matmul(int n) {
        Tensor a = Te.placeholder("A", DType.FLOAT32, n, n), b = Te.placeholder("B", DType.FLOAT32, n, n);
        return new Workload("matmul " + n + "x" + n + "x" + n, ComputeDAG.of(Linalg.matmul(a, b)), new int[] {n, n, n});
    }

    /** fp16 x fp16 -> fp32 matmul, which the Tensor Core sketch rule (TensorCoreTiling) tensorizes with wmma. */
    static Workload tensorCoreMatmul(int n) {
        return new Workload(
                "tensor core matmul f16->f32 " + n,
                TensorCoreSchedule.matmul(DType.FLOAT16, n, n, n, false),
                new int[] {n, n, n},
                Inputs.HALF);
    }

    /** float32 matmul that the Tensor Core sketch runs on TF32 Tensor Cores where the target allows TF32. */
    static Workload tf32Matmul(int n) {
        return new Workload(
                "tensor core matmul tf32->f32 " + n,
                TensorCoreSchedule.matmul(DType.FLOAT32, n, n, n, false),
                new int[] {n, n, n},
                Inputs.TF32);
    }

    /**
     * The conv2d layer in NHWC on float16 Tensor Cores, as {@code ToTensorCores} puts a network's convs there: an
     * implicit GEMM ({@link ConvGemm}) whose im2col tiles the Tensor Core sketch gathers from the image into shared
     * memory, float32 output {@code [rows, COp]} (rows: N * OH * OW, and COp: CO, rounded up to 16); its baseline is
     * cublasGemmEx
     * f16 -> f32 of the same GEMM shape (im2col not counted), as for the float32 conv.
     */
    static Workload tensorCoreConv2d(int[] c) {
        Tensor data = Te.placeholder("data", DType.FLOAT16, c[0], c[2], c[3], c[1]);
        long oh = c[2] + 2L * c[7] - c[5] + 1, ow = c[3] + 2L * c[7] - c[6] + 1;
        long m = c[0] * oh * ow, rows = (m + 15) / 16 * 16, k = (long) c[1] * c[5] * c[6], kp = (k + 15) / 16 * 16;
        int cop = (c[4] + 15) / 16 * 16; // output channels in whole tiles, as ToTensorCores pads them
        Tensor weight = Te.placeholder("weight", DType.FLOAT16, kp, cop);
        return new Workload(
                "tensor core conv2d f16 N" + c[0] + " " + c[1] + "x" + c[2] + "x" + c[3] + "->" + c[4] + " k" + c[5]
                        + "x" + c[6] + " p" + c[7],
                ComputeDAG.of(ConvGemm.conv2dNhwcGemm(data, weight, c[5], c[6], ConvParams.of(2, 1, c[7]), rows)),
                new int[] {(int) rows, cop, (int) kp},
                Inputs.HALF);
    }

    /** conv2d NCHW: batch, in channels, height, width, out channels, kernel h, kernel w, padding (stride 1). */
    static Workload conv2d(int[] c) {
        Tensor data = Te.placeholder("data", DType.FLOAT32, c[0], c[1], c[2], c[3]);
        Tensor weight = Te.placeholder("weight", DType.FLOAT32, c[4], c[1], c[5], c[6]);
        int oh = c[2] + 2 * c[7] - c[5] + 1, ow = c[3] + 2 * c[7] - c[6] + 1;
        return new Workload(
                "conv2d N" + c[0] + " " + c[1] + "x" + c[2] + "x" + c[3] + "->" + c[4] + " k" + c[5] + "x" + c[6] + " p"
                        + c[7],
                ComputeDAG.of(Conv.conv2dNchw(data, weight, 1, c[7])),
                new int[] {c[0] * oh * ow, c[4], c[1] * c[5] * c[6]});
    }

    private static void dryRun(List<Workload> workloads, double seconds, int trials) {
        CudaTarget target = Target.cuda();
        boolean compile = Nvrtc.availability().available()
                || dev.kiln.cuda.compile.Nvcc.find().isPresent();
        CudaCompiler compiler = CudaCompiler.withDefaultCache();
        for (Workload w : workloads) {
            CudaTarget wt = w.target(target);
            SearchTask task = AutoSchedule.task(w.dag(), wt);
            var sketches = TargetRules.cuda().sketches(task);
            if (w.inputs().tensorCores()) {
                // sample what makes this workload: the Tensor Core sketch
                sketches = sketches.stream()
                        .filter(k -> k.steps().stream().anyMatch(x -> x instanceof dev.kiln.schedule.TensorizeStep))
                        .toList();
                if (sketches.isEmpty()) throw new KilnException("no Tensor Core sketch for " + w.name());
            }
            InitPopulation.Result r =
                    TargetRules.cuda().population(task, sketches).sample(3, new SplittableRandom(1));
            int kernels = 0;
            for (var c : r.candidates()) {
                PrimFunc f = ScheduleLowerer.forTarget(wt).lower(task, c.schedule());
                var m = CudaCodegen.generate(f);
                if (compile) compiler.compile(m, wt.computeCapability());
                kernels += m.launches().size();
            }
            System.out.printf(
                    "dry run: %s (%.1f GFLOP): %d sketch(es), %d sampled programs lowered, %d kernel(s) generated%s;"
                            + " a real run tunes it for %.0f s or %d trials%n",
                    w.name(),
                    w.dag().flopCount() / 1e9,
                    sketches.size(),
                    r.candidates().size(),
                    kernels,
                    compile ? " and compiled" : " (no CUDA compiler: not compiled)",
                    seconds,
                    trials);
        }
        printTable(List.of());
    }

    private static Row run(
            Workload w, CudaTarget target, double seconds, int trials, Path log, CublasSgemm cublas, CudaDevice d) {
        TuneOptions o = TuneOptions.builder()
                .trials(trials)
                .measuresPerRound(32)
                .timeBudget(Duration.ofMillis((long) (seconds * 1000)))
                .logFile(log)
                .progressBar(false)
                .verbose(true)
                .measureOptions(MeasureOptions.defaults()
                        .withCheckCorrectness(false)
                        .withRepeats(3)
                        .withMinRepeatMs(1)
                        .withTimeoutSeconds(5))
                .build();
        System.out.println("tuning " + w.name() + " for up to " + seconds + " s ...");
        try (TuneResult r = AutoSchedule.tune(w.dag(), w.target(target), o)) {
            CudaKernel best = (CudaKernel) r.kernel();
            PrimFunc naiveF = GpuPasses.lower(
                    "naive",
                    SimpleGpuSchedule.of(w.dag(), 128),
                    CudaBackend.limits(target),
                    Lowering.Options.defaults());
            try (CudaKernel naive = new CudaBackend().compile(naiveF, target)) {
                List<NDArray> args = new ArrayList<>(), ref = new ArrayList<>();
                long seed = 1;
                for (Tensor t : w.dag().inputs())
                    args.add(NDArray.random(t.dtype(), seed++, t.shape().toArray()));
                for (Tensor t : w.dag().outputs()) {
                    args.add(NDArray.allocate(t.dtype(), t.shape().toArray()));
                    ref.add(NDArray.allocate(t.dtype(), t.shape().toArray()));
                }
                double ms;
                try (DeviceArgs da = best.upload(args.toArray(NDArray[]::new))) {
                    best.launch(da);
                    best.download(da, args.toArray(NDArray[]::new));
                    for (int i = 0; i < 3; i++) best.launch(da);
                    ms = best.timeSeconds(da, 10) * 1e3;
                }
                List<NDArray> naiveArgs =
                        new ArrayList<>(args.subList(0, w.dag().inputs().size()));
                naiveArgs.addAll(ref);
                naive.call(naiveArgs.toArray(NDArray[]::new));
                // float16 or TF32 inputs (11-bit significands; the plain kernel sums the float32 inputs, Kiln's the
                // rounded ones, in another order): 1e-2 covers k = 4096
                double tol = w.inputs().tensorCores() ? 1e-2 : 1e-3;
                Comparison c = args.get(args.size() - 1).compareTo(ref.getLast(), tol, tol);
                String check = c.ok()
                        ? "ok"
                        : "WRONG: " + c.report().lines().findFirst().orElse("");
                double vendorMs = sgemmMs(cublas, d, w.gemm(), w.inputs());
                return new Row(w.name(), w.dag().flopCount() / 1e9, ms, vendorMs, check, r.trials());
            }
        }
    }

    /** The time of one sgemm of {@code m x n x k} on device-resident random data, in ms. */
    private static double sgemmMs(CublasSgemm cublas, CudaDevice d, int[] mnk, Inputs inputs) {
        int m = mnk[0], n = mnk[1], k = mnk[2];
        DType in = inputs == Inputs.HALF ? DType.FLOAT16 : DType.FLOAT32;
        long e = in.bytes();
        Buffer a = Buffer.rowMajor("a", in, List.of((long) m, (long) k), MemoryScope.GLOBAL);
        Buffer b = Buffer.rowMajor("b", in, List.of((long) k, (long) n), MemoryScope.GLOBAL);
        Buffer c = Buffer.rowMajor("c", DType.FLOAT32, List.of((long) m, (long) n), MemoryScope.GLOBAL);
        try (DeviceArgs da = new DeviceArgs(d);
                NDArray ha = NDArray.random(in, 3, m, k);
                NDArray hb = NDArray.random(in, 4, k, n)) {
            da.add(a, e * m * k);
            da.add(b, e * k * n);
            da.add(c, 4L * m * n);
            d.upload(ha, da.pointer(a), e * m * k);
            d.upload(hb, da.pointer(b), e * k * n);
            Runnable once =
                    switch (inputs) {
                        case HALF -> () -> cublas.runHalf(m, n, k, da, a, b, c);
                        case TF32 -> () -> cublas.runTf32(m, n, k, da, a, b, c);
                        case FLOAT32 -> () -> cublas.run(m, n, k, da, a, b, c);
                    };
            return d.with(() -> {
                for (int i = 0; i < 3; i++) once.run();
                return d.time(() -> {
                            for (int i = 0; i < 10; i++) once.run();
                        })
                        / 10.0;
            });
        }
    }

    static void printTable(List<Row> rows) {
        System.out.println();
        System.out.printf(
                "%-40s %12s %12s %10s %7s  %s%n",
                "workload", "Kiln GFLOP/s", "cuBLAS GF/s", "Kiln/cuBLAS", "trials", "check");
        if (rows.isEmpty())
            System.out.printf("%-40s %12s %12s %10s %7s  %s%n", "(dry run: nothing measured)", "-", "-", "-", "-", "-");
        for (Row r : rows) {
            double k = r.gflop() / (r.kilnMs() / 1e3), v = r.gflop() / (r.vendorMs() / 1e3);
            System.out.printf("%-40s %12.1f %12.1f %10.3f %7d  %s%n", r.name(), k, v, k / v, r.trials(), r.check());
        }
        System.out.println(
                "(the conv2ds' cuBLAS column is a GEMM of their im2col shape, im2col not counted; the Tensor Core"
                        + " matmuls' are cublasGemmEx f16->f32 with tensor ops and f32 with"
                        + " CUBLAS_COMPUTE_32F_FAST_TF32; times from CUDA events)");
    }
}
