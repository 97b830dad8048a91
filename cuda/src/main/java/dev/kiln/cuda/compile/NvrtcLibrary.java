package dev.kiln.cuda.compile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Where an NVRTC shared library may be, and which one to use: {@code libnvrtc.so.<version>} files
 * in, in order, the directory named by the system property {@code kiln.nvrtc.path} or the
 * environment variable {@code KILN_NVRTC_PATH}, the entries of {@code LD_LIBRARY_PATH},
 * {@code $CUDA_HOME/lib64}, the CUDA toolkit's standard places ({@code /usr/local/cuda/lib64},
 * {@code /usr/local/cuda/targets/x86_64-linux/lib}, {@code /usr/local/cuda-*}), the system library
 * directories, the NVIDIA wheels of Python installations ({@code site-packages/nvidia/*}/lib), and
 * the project folder {@code .cache/nvrtc} (looked for in the working directory
 * and its parents; {@code scripts/fetch-nvrtc.sh} fills it). The newest version found wins (13
 * before 12.6 before 12.4); on a tie, the first place in that order.
 */
public final class NvrtcLibrary {
    private NvrtcLibrary() {}

    /** A candidate library and its version from the file name ({@code libnvrtc.so.12.4.127} is 12.4.127). */
    public record Candidate(Path path, List<Integer> version) {
        public String versionString() {
            return String.join(".", version.stream().map(String::valueOf).toList());
        }
    }

    /** The directories searched, in order (only those that exist). */
    public static List<Path> searchDirectories() {
        Set<Path> dirs = new LinkedHashSet<>();
        String prop = System.getProperty("kiln.nvrtc.path");
        if (prop != null && !prop.isBlank()) dirs.add(Path.of(prop));
        String env = System.getenv("KILN_NVRTC_PATH");
        if (env != null && !env.isBlank()) dirs.add(Path.of(env));
        String ld = System.getenv("LD_LIBRARY_PATH");
        if (ld != null) for (String d : ld.split(":")) if (!d.isBlank()) dirs.add(Path.of(d));
        String home = System.getenv("CUDA_HOME");
        if (home != null) dirs.add(Path.of(home, "lib64"));
        dirs.add(Path.of("/usr/local/cuda/lib64"));
        dirs.add(Path.of("/usr/local/cuda/targets/x86_64-linux/lib"));
        try (Stream<Path> s = Files.list(Path.of("/usr/local"))) {
            s.filter(p -> p.getFileName().toString().startsWith("cuda-"))
                    .sorted(Comparator.reverseOrder())
                    .forEach(p -> {
                        dirs.add(p.resolve("lib64"));
                        dirs.add(p.resolve("targets/x86_64-linux/lib"));
                    });
        } catch (IOException | RuntimeException e) {
            // no /usr/local: nothing to add
        }
        for (String d : List.of("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu"))
            dirs.add(Path.of(d));
        // the NVIDIA wheels pip installs (with PyTorch): site-packages/nvidia/<component>/lib
        for (String root : List.of("/usr/local/lib", "/usr/lib", System.getProperty("user.home") + "/.local/lib")) {
            try (Stream<Path> py = Files.list(Path.of(root))) {
                for (Path p : py.filter(x -> x.getFileName().toString().startsWith("python3"))
                        .toList()) {
                    for (String pk : List.of("site-packages", "dist-packages")) {
                        Path nv = p.resolve(pk).resolve("nvidia");
                        if (!Files.isDirectory(nv)) continue;
                        try (Stream<Path> comps = Files.list(nv)) {
                            comps.map(c -> c.resolve("lib")).sorted().forEach(dirs::add);
                        }
                    }
                }
            } catch (IOException | RuntimeException e) {
                // no such Python installation
            }
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) dirs.add(p.resolve(".cache/nvrtc"));
        return dirs.stream().filter(Files::isDirectory).toList();
    }

    /** Every {@code libnvrtc.so.*} in the search directories, in search order. */
    public static List<Candidate> candidates() {
        return candidates("libnvrtc");
    }

    /**
     * Every {@code <name>.so.<version>} in the search directories (the same places serve the
     * CUDA toolkit's other libraries: {@code libcublas}, ...), in search order.
     */
    public static List<Candidate> candidates(String name) {
        List<Candidate> out = new ArrayList<>();
        String pattern = java.util.regex.Pattern.quote(name + ".so.") + "\\d+(\\.\\d+)*";
        for (Path dir : searchDirectories()) {
            try (Stream<Path> s = Files.list(dir)) {
                s.filter(p -> p.getFileName().toString().matches(pattern))
                        .sorted()
                        .forEach(p -> out.add(new Candidate(
                                p.toAbsolutePath(), version(p.getFileName().toString()))));
            } catch (IOException | RuntimeException e) {
                // an unreadable directory holds nothing we can use
            }
        }
        return out;
    }

    /** The newest candidate. */
    public static Optional<Candidate> newest() {
        return newest("libnvrtc");
    }

    /** The newest {@code <name>.so.*}. */
    public static Optional<Candidate> newest(String name) {
        Candidate best = null;
        for (Candidate c : candidates(name)) if (best == null || compare(c.version(), best.version()) > 0) best = c;
        return Optional.ofNullable(best);
    }

    static List<Integer> version(String fileName) {
        String v = fileName.substring(fileName.indexOf(".so.") + 4);
        List<Integer> out = new ArrayList<>();
        for (String part : v.split("\\.")) out.add(Integer.parseInt(part));
        return out;
    }

    static int compare(List<Integer> a, List<Integer> b) {
        for (int i = 0; i < Math.max(a.size(), b.size()); i++) {
            int x = i < a.size() ? a.get(i) : -1, y = i < b.size() ? b.get(i) : -1;
            if (x != y) return Integer.compare(x, y);
        }
        return 0;
    }

    /**
     * The builtins library NVRTC loads at compile time, from the same directory ({@code libnvrtc-builtins.so.12.4...}).
     */
    static Optional<Path> builtinsBeside(Path nvrtc) {
        try (Stream<Path> s = Files.list(nvrtc.getParent())) {
            return s.filter(p -> p.getFileName().toString().startsWith("libnvrtc-builtins.so."))
                    .min(Comparator.naturalOrder());
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
