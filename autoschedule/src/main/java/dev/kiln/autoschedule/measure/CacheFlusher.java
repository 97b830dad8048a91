package dev.kiln.autoschedule.measure;

import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CacheEviction;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/**
 * Evicts a program's data from the CPU caches between timed runs, so that every run starts cold
 * (TVM's {@code enable_cpu_cache_flush}), as a kernel's call in a network does: the other kernels of a run have
 * pushed its weights out of every cache. Where the backend can evict memory ({@link Backend#cacheEviction}: the
 * LLVM backend's {@code clflush}), every argument of the program is evicted from all cores' caches, and on
 * request ({@link #TEMPORARIES_PROPERTY}) every heap temporary it takes from the backend's workspace too
 * ({@link CompiledKernel#heapTemporaries}: a padded copy of an input, a packed operand): in a network the other
 * kernels push those out as well, and a depthwise conv timed with its padded copy warm from the previous repeat
 * ran up to twice as slow in MobileNet-V2 as in the tuner. Otherwise
 * (the interpreter, the JVM backend) one value per cache line is written to a buffer a quarter larger than the
 * last-level cache (8 MiB at least) from the measuring thread: that clears the shared cache and that core's own,
 * while the other cores' private caches keep what a parallel program left there, so it models a network's
 * cold weights only in part; {@link #describe()} says which one runs.
 */
final class CacheFlusher {
    private static final long FALLBACK_LLC_BYTES = 32L << 20;
    /**
     * {@code -Dkiln.measure.evictTemporaries=true} evicts the kernel's heap temporaries too (off by default: on
     * MobileNet-V2 at one thread, two seeds, it cost 12-22% of the trials in the same time and the network did not
     * run faster; docs/PERFORMANCE.md, sixteenth session).
     */
    static final String TEMPORARIES_PROPERTY = "kiln.measure.evictTemporaries";

    private final CacheEviction eviction;
    private final boolean temporaries;
    private final MemorySegment buffer;
    private long round;

    /** A flusher that writes a buffer larger than the last-level cache (no eviction). */
    CacheFlusher() {
        this.eviction = null;
        this.temporaries = false;
        long llc = lastLevelCacheBytes();
        long bytes = Math.max(8L << 20, llc + llc / 4);
        buffer = Arena.ofAuto().allocate(bytes, 64);
    }

    /** A flusher that evicts the program's arguments with {@code eviction}. */
    CacheFlusher(CacheEviction eviction) {
        this(eviction, Boolean.getBoolean(TEMPORARIES_PROPERTY));
    }

    /** A flusher that evicts the program's arguments, and its heap temporaries where {@code temporaries}. */
    CacheFlusher(CacheEviction eviction, boolean temporaries) {
        this.eviction = java.util.Objects.requireNonNull(eviction, "eviction");
        this.temporaries = temporaries;
        this.buffer = null;
    }

    /** Evicts the arguments where {@code backend} can on {@code target}, else writes a buffer (and says so once). */
    static CacheFlusher of(Backend backend, Target target) {
        Optional<CacheEviction> e = backend == null ? Optional.empty() : backend.cacheEviction(target);
        if (e.isPresent()) return new CacheFlusher(e.get());
        CacheFlusher f = new CacheFlusher();
        if (backend != null) {
            System.getLogger(CacheFlusher.class.getName())
                    .log(
                            System.Logger.Level.INFO,
                            "cache flush on " + target + ": " + f.describe() + " (backend " + backend.name()
                                    + " cannot evict memory from other cores' caches)");
        }
        return f;
    }

    /** Whether this flusher evicts the arguments from all caches (rather than writing a buffer). */
    boolean evicts() {
        return eviction != null;
    }

    /** How this flusher flushes, for reports. */
    String describe() {
        if (evicts() && !temporaries)
            return "every argument evicted from all cores' caches (clflush), heap temporaries left warm (-D"
                    + TEMPORARIES_PROPERTY + "=true evicts them)";
        return evicts()
                ? "every argument and heap temporary evicted from all cores' caches (clflush)"
                : "a " + (buffer.byteSize() >> 20) + " MiB buffer written by the measuring thread";
    }

    /** The size of the buffer written ({@code 0} for an evicting flusher). */
    long bytes() {
        return buffer == null ? 0 : buffer.byteSize();
    }

    /**
     * Flushes before a timed run of a program on {@code args} whose calls take heap temporaries of the sizes
     * {@code temporaries} (bytes; {@link CompiledKernel#heapTemporaries}).
     */
    void flush(NDArray[] args, java.util.List<Long> temporaries) {
        if (eviction != null) {
            for (NDArray a : args) if (a != null) eviction.evict(a.segment());
            if (this.temporaries) for (long bytes : temporaries) eviction.evictTemporaries(bytes);
            return;
        }
        long v = ++round;
        for (long off = 0; off < buffer.byteSize(); off += 64) buffer.set(ValueLayout.JAVA_LONG, off, v + off);
    }

    /** The largest cache sysfs lists for cpu0 (usually the L3), or 32 MiB if it cannot be read. */
    static long lastLevelCacheBytes() {
        long best = 0;
        for (int i = 0; i < 8; i++) {
            Path p = Path.of("/sys/devices/system/cpu/cpu0/cache/index" + i + "/size");
            try {
                if (Files.isReadable(p))
                    best = Math.max(best, parseSize(Files.readString(p).trim()));
            } catch (java.io.IOException | RuntimeException e) {
                // an unreadable entry: keep the others
            }
        }
        return best > 0 ? best : FALLBACK_LLC_BYTES;
    }

    /** Reads sysfs sizes such as {@code 32768K} or {@code 36M}. */
    static long parseSize(String s) {
        String t = s.toUpperCase(Locale.ROOT);
        long mult = 1;
        if (t.endsWith("K")) mult = 1L << 10;
        else if (t.endsWith("M")) mult = 1L << 20;
        else if (t.endsWith("G")) mult = 1L << 30;
        if (mult != 1) t = t.substring(0, t.length() - 1);
        return Long.parseLong(t) * mult;
    }
}
