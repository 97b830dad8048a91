package dev.kiln.cuda.compile;

import dev.kiln.cuda.codegen.CudaModule;
import dev.kiln.ir.KilnException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The CUDA toolkit's {@code nvcc} as an out-of-process compiler of CUDA C to PTX. It needs no GPU
 * and no driver, so the test suite uses it to check that generated code compiles wherever a
 * toolkit is installed; the backend itself compiles with {@link Nvrtc}. Found on the
 * {@code PATH}, then under {@code $CUDA_HOME/bin} and {@code /usr/local/cuda/bin}.
 */
public final class Nvcc {
    private Nvcc() {}

    /** The nvcc executable, if there is one. */
    public static Optional<Path> find() {
        List<Path> candidates = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null)
            for (String dir : path.split(java.io.File.pathSeparator))
                if (!dir.isEmpty()) candidates.add(Path.of(dir, "nvcc"));
        String home = System.getenv("CUDA_HOME");
        if (home != null) candidates.add(Path.of(home, "bin", "nvcc"));
        candidates.add(Path.of("/usr/local/cuda/bin/nvcc"));
        return candidates.stream().filter(Files::isExecutable).findFirst();
    }

    /**
     * Compiles CUDA C to PTX for {@code arch} (e.g. {@code sm_90}) with {@code flags}; throws
     * {@link KilnException} with nvcc's messages when it fails or there is no nvcc.
     */
    public static String ptx(String source, String arch, List<String> flags) {
        Path nvcc = find().orElseThrow(
                        () -> new KilnException("nvcc not found on PATH, under $CUDA_HOME/bin or /usr/local/cuda/bin"));
        Path dir = null;
        try {
            dir = Files.createTempDirectory("kiln-nvcc");
            Path cu = dir.resolve("module.cu"), ptx = dir.resolve("module.ptx");
            Files.writeString(cu, source, StandardCharsets.UTF_8);
            List<String> cmd = new ArrayList<>(List.of(nvcc.toString(), "-ptx", "-arch=" + arch));
            cmd.addAll(flags);
            cmd.addAll(List.of("-o", ptx.toString(), cu.toString()));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(300, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new KilnException("nvcc did not finish within 300 s");
            }
            if (p.exitValue() != 0) {
                throw new KilnException(
                        "nvcc failed (exit " + p.exitValue() + "):\n" + log + "\n" + Sources.numbered(source, log));
            }
            return Files.readString(ptx, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new KilnException("cannot run nvcc: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KilnException("interrupted while nvcc ran");
        } finally {
            if (dir != null) deleteQuietly(dir);
        }
    }

    /**
     * One translation unit holding several modules, each in its own namespace (the kernels are
     * {@code extern "C"}, so their names must differ across the modules), with the includes
     * first. nvcc then checks many kernels in one run of about a second.
     */
    public static String batch(List<CudaModule> modules) {
        Set<String> includes = new LinkedHashSet<>();
        StringBuilder body = new StringBuilder();
        for (int m = 0; m < modules.size(); m++) {
            body.append("namespace kiln_module").append(m).append(" {\n");
            for (String line : modules.get(m).source().split("\n", -1)) {
                if (line.startsWith("#include")) includes.add(line);
                else body.append(line).append('\n');
            }
            body.append("}  // namespace kiln_module").append(m).append("\n\n");
        }
        return String.join("\n", includes) + (includes.isEmpty() ? "" : "\n") + body;
    }

    private static void deleteQuietly(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException e) {
            // a temporary directory left behind is harmless
        }
    }
}
