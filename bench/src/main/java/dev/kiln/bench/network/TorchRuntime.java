package dev.kiln.bench.network;

import dev.kiln.ir.KilnException;
import dev.kiln.samples.OpenBlas;
import java.util.List;
import java.util.Locale;
import org.bytedeco.pytorch.global.torch;

/**
 * libtorch in this process: loading it (once, with NNPACK off), its threads and OpenBLAS's, and a
 * report of the threading state. What the environment must set before the JVM starts is in
 * {@link TorchNetwork}'s class comment.
 */
public final class TorchRuntime {
    private TorchRuntime() {}

    /**
     * Sets libtorch's intra-op threads and OpenBLAS's threads to {@code n} for this process (see the
     * class comment for what the environment must set before the JVM starts).
     */
    public static void setThreads(int n) {
        if (n < 1) throw new KilnException("TorchRuntime: threads must be at least 1, got " + n);
        ensureAvailable();
        torch.set_num_threads(n);
        OpenBlas.setThreads(n);
    }

    /** One line on the threading state: libtorch's threads, OpenBLAS's kernel, and the variables that matter. */
    public static String threadReport() {
        ensureAvailable();
        StringBuilder sb = new StringBuilder();
        sb.append("torch threads ")
                .append(torch.get_num_threads())
                .append(", openblas core ")
                .append(OpenBlas.coreName());
        for (String v : List.of("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE")) {
            String e = System.getenv(v);
            sb.append(", ").append(v).append('=').append(e == null ? "(unset)" : e);
        }
        return sb.toString();
    }

    /**
     * Whether libtorch's oneDNN would die with SIGFPE creating this conv in channels_last: oneDNN 3.7's brgemm 1x1
     * convolution ({@code brg_blocking_t::est_eff_1x1}) keeps a "maskrcnn workaround" for five (input, output)
     * channel pairs that divides, in integers, by the count of AMX row blocks, which is 0 when the kernel is not an
     * AMX one (every float32 conv; found on Zen 5, where ResNet-50 died on its 1x1 convs 1024-2048, 1024-512,
     * 256-1024, 512-1024 and 512-2048 at every thread count). The pairs are that code's own; other 1x1 shapes
     * compute the same ratio in floats. False for any other oneDNN version than 3.7 (as libtorch reports it).
     */
    public static boolean oneDnn37Brgemm1x1Fpe(long kh, long kw, long groups, long ic, long oc) {
        if (kh != 1 || kw != 1 || groups != 1) return false;
        if (!ensureAvailable().contains("MKL-DNN v3.7.")) return false;
        return (ic == 1024 && (oc == 2048 || oc == 512))
                || (ic == 256 && oc == 1024)
                || (ic == 512 && (oc == 1024 || oc == 2048));
    }

    private static volatile String version;

    /**
     * Loads libtorch (once); throws an {@link IllegalStateException} saying why when it cannot (no
     * native library for this platform, a missing dependency, a class-path mix-up).
     */
    public static String ensureAvailable() {
        String v = version;
        if (v != null) return v;
        synchronized (TorchRuntime.class) {
            if (version != null) return version;
            try {
                org.bytedeco.javacpp.Loader.load(torch.class);
                // NNPACK cannot start on these CPUs ("Unsupported hardware"); left enabled, every conv call tries it
                // again, fails and warns before taking the path it takes anyway (oneDNN). Off, only the retry goes.
                if (torch.globalContext().userEnabledNNPACK())
                    torch.globalContext().setUserEnabledNNPACK(false);
                String cfg = torch.show_config().getString();
                String first = cfg.lines()
                        .filter(l -> l.contains("CPU capability")
                                || l.toLowerCase(Locale.ROOT).contains("onednn")
                                || l.contains("MKL-DNN"))
                        .map(String::strip)
                        .reduce((a, b) -> a + "; " + b)
                        .orElse("");
                version = "libtorch (org.bytedeco:pytorch 2.10.0-1.5.13) " + first;
                return version;
            } catch (Throwable e) {
                throw new IllegalStateException(
                        "PyTorch (org.bytedeco:pytorch 2.10.0-1.5.13, linux-x86_64) cannot be loaded on "
                                + System.getProperty("os.name") + "/" + System.getProperty("os.arch") + ": " + e
                                + (e.getCause() == null ? "" : " (cause: " + e.getCause() + ")")
                                + ". It needs the linux-x86_64 jars of pytorch, openblas 0.3.31-1.5.13 and javacpp "
                                + "1.5.13 on the class path.",
                        e);
            }
        }
    }
}
