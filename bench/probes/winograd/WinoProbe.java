import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.bench.suite.KernelTimer;
import dev.kiln.ir.DType;
import dev.kiln.target.CompiledKernel;
import dev.kiln.autoschedule.tune.LayoutFreeKernel;
import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvParams;
import dev.kiln.nn.Winograd;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A 3x3 stride-1 pad-1 NHWC conv tuned directly and by Winograd F(m, 3) (weights layout-free in both), then the best
 * kernels timed in alternating passes; the Winograd outputs are compared with the direct one.
 * Usage: WinoProbe H W CI CO THREADS TRIALS LOGDIR m...   (m = 0: direct)
 */
public class WinoProbe {
    public static void main(String[] a) throws Exception {
        int h = Integer.parseInt(a[0]), w = Integer.parseInt(a[1]), ci = Integer.parseInt(a[2]),
                co = Integer.parseInt(a[3]), threads = Integer.parseInt(a[4]), trials = Integer.parseInt(a[5]);
        Path dir = Path.of(a[6]);
        java.nio.file.Files.createDirectories(dir);
        CpuTarget target = Target.cpu().withCores(threads).withFastMath(true);
        Tensor data = Te.placeholder("data", DType.FLOAT32, 1, h, w, ci);
        NDArray x = NDArray.random(DType.FLOAT32, 1, 1, h, w, ci);
        NDArray wt = NDArray.random(DType.FLOAT32, 2, 3, 3, ci, co);
        List<String> labels = new ArrayList<>();
        List<CompiledKernel> kernels = new ArrayList<>();
        List<NDArray[]> argsList = new ArrayList<>();
        for (int k = 7; k < a.length; k++) {
            int m = Integer.parseInt(a[k]);
            Tensor out;
            NDArray weightArg;
            String wname;
            if (m == 0) {
                Tensor weight = Te.placeholder("weight", DType.FLOAT32, 3, 3, ci, co);
                out = Conv.conv2dNhwc(data, weight, ConvParams.of(2, 1, 1));
                weightArg = wt;
                wname = "weight";
            } else {
                Tensor u = Te.placeholder("u", DType.FLOAT32, m + 2, m + 2, ci, co);
                out = Winograd.conv2dNhwcTransformed(data, u, m, ConvParams.of(2, 1, 1));
                weightArg = NDArray.fromFloats(Winograd.transformWeight(wt.toFloatArray(), ci, co, m), m + 2, m + 2, ci, co);
                wname = "u";
            }
            ComputeDAG dag = ComputeDAG.of(out);
            Path log = dir.resolve("m" + m + "-" + h + "x" + w + "x" + ci + "x" + co + "-" + threads + "t.jsonl");
            long t0 = System.nanoTime();
            if (trials > 0) {
                TuneResult r = AutoSchedule.tune(dag, target, TuneOptions.builder().trials(trials).seed(1).logFile(log)
                        .progressBar(false).layoutFree(wname).build());
                System.out.printf("m=%d tuned %d trials in %.0f s, best %.1f GFLOP/s (trial %d)%n", m, r.trials(),
                        (System.nanoTime() - t0) / 1e9, r.gflops(), r.bestTrial());
                r.kernel().close();
            }
            LayoutFreeKernel kern = AutoSchedule.buildLayoutFree(dag, target, log, wname);
            NDArray packed = kern.pack(wname, weightArg);
            NDArray o = NDArray.allocate(DType.FLOAT32, 1, h, w, co);
            labels.add("m=" + m);
            kernels.add(kern);
            argsList.add(new NDArray[] {x, packed, o});
        }
        KernelTimer timer = new KernelTimer(20, 0.5, 15, 0.02);
        for (int pass = 0; pass < 3; pass++) {
            StringBuilder sb = new StringBuilder("pass " + pass + ":");
            for (int i = 0; i < kernels.size(); i++) {
                CompiledKernel kk = kernels.get(i);
                NDArray[] args = argsList.get(i);
                var t = timer.time(() -> kk.call(args));
                sb.append(String.format("  %s %.4f ms", labels.get(i), t.medianMs()));
            }
            System.out.println(sb + String.format("  (load %s)", java.nio.file.Files.readString(Path.of("/proc/loadavg")).trim()));
        }
        float[] ref = argsList.get(0)[2].toFloatArray();
        double scale = 0;
        for (float v : ref) scale = Math.max(scale, Math.abs(v));
        for (int i = 1; i < kernels.size(); i++) {
            float[] got = argsList.get(i)[2].toFloatArray();
            double err = 0;
            for (int j = 0; j < ref.length; j++) err = Math.max(err, Math.abs(got[j] - ref[j]));
            System.out.printf("%s max |diff| %.3g (relative to max |out| %.3g: %.3g)%n", labels.get(i), err, scale, err / scale);
        }
    }
}
