package dev.kiln.cuda.compile;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * A disk cache of PTX, keyed by everything that decides it: the CUDA C source, the architecture,
 * the compile flags and the compiler (name and version). One file per entry, {@code <sha256>.ptx},
 * written to a temporary file and moved into place, so concurrent writers and a crash never leave
 * a torn entry. The default directory is the system property {@code kiln.cuda.ptxCache}, else
 * {@code $XDG_CACHE_HOME/kiln/ptx}, else {@code ~/.cache/kiln/ptx}. A cache that cannot be read or
 * written only costs recompilation; it never fails a compile.
 */
public final class PtxCache {
    private final Path dir;

    public PtxCache(Path dir) {
        this.dir = dir;
    }

    /** The cache in the default directory. */
    public static PtxCache defaultCache() {
        String prop = System.getProperty("kiln.cuda.ptxCache");
        if (prop != null && !prop.isBlank()) return new PtxCache(Path.of(prop));
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return new PtxCache(base.resolve("kiln").resolve("ptx"));
    }

    public Path directory() {
        return dir;
    }

    /** The key of a compilation. */
    public static String key(String source, String arch, List<String> flags, String compiler) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            for (String part : List.of(compiler, arch, String.join(" ", flags), source)) {
                md.update(part.getBytes(StandardCharsets.UTF_8));
                md.update((byte) 0);
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    public Optional<String> get(String key) {
        Path p = dir.resolve(key + ".ptx");
        try {
            return Files.isRegularFile(p) ? Optional.of(Files.readString(p, StandardCharsets.UTF_8)) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Stores an entry; returns whether it was written. */
    public boolean put(String key, String ptx) {
        try {
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, key, ".tmp");
            Files.writeString(tmp, ptx, StandardCharsets.UTF_8);
            try {
                Files.move(
                        tmp,
                        dir.resolve(key + ".ptx"),
                        StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, dir.resolve(key + ".ptx"), StandardCopyOption.REPLACE_EXISTING);
            }
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
