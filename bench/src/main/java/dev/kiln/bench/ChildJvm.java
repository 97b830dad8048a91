package dev.kiln.bench;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How a benchmark starts a child JVM like itself (network-bench, the operator suite, the ONNX benchmark): the command
 * line's start, and the thread-pool variables that OpenMP and OpenBLAS read once when a process starts.
 */
public final class ChildJvm {
    private ChildJvm() {}

    /** This JVM's java binary, its flags and class path, then {@code main}: the child's arguments follow. */
    public static List<String> command(Class<?> main) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current()
                .info()
                .command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        return cmd;
    }

    /**
     * Sets a child's thread pools to {@code threads} ({@code OMP_NUM_THREADS}, {@code OPENBLAS_NUM_THREADS}), its
     * {@code OPENBLAS_CORETYPE} when given, and PyTorch's quiet logging and passive OpenMP waiting unless the
     * environment says otherwise.
     */
    public static void threads(Map<String, String> env, int threads, String coreType) {
        env.put("OMP_NUM_THREADS", String.valueOf(threads));
        env.put("OPENBLAS_NUM_THREADS", String.valueOf(threads));
        env.putIfAbsent("TORCH_CPP_LOG_LEVEL", "ERROR");
        // libgomp's default (spinning) wait policy collapses PyTorch on 2 vCPUs shared with the JVM's own
        // threads: MobileNet-V2 at 2 threads took 110-300 ms spinning against 16-22 ms passive (and 21-30 ms
        // on 1 thread), measured here; PyTorch gets its best setting.
        env.putIfAbsent("OMP_WAIT_POLICY", "PASSIVE");
        if (coreType != null) env.put("OPENBLAS_CORETYPE", coreType);
    }
}
