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
 * LLVM backend's {@code clflush}), the flusher first fills the caches with modified lines (one value written per
 * cache line of a buffer a quarter larger than the last-level cache, by the measuring thread), then evicts every
 * argument of the program from all cores' caches, and on request ({@link #TEMPORARIES_PROPERTY}) every heap
 * temporary it takes from the backend's workspace too ({@link CompiledKernel#heapTemporaries}: a padded copy of an
 * input, a packed operand): in a network the other kernels push those out as well, and a depthwise conv timed with
 * its padded copy warm from the previous repeat ran up to twice as slow in MobileNet-V2 as in the tuner.
 *
 * <p>The fill ({@link #DIRTY_PROPERTY}, on by default) is what the network leaves: the kernels before a call wrote
 * their outputs, so the call's reads of its weights from memory wait on write-backs too. A program whose weight
 * reads come in bursts (a conv over a 7x7 map whose 9.4 MB of weights are read once per output row) loses more to
 * that than one that spreads them over its run, while on clean caches the two measured the same; ResNet-50 tuned
 * with the fill ran 1.03-1.05x faster at 2 threads in two same-process A/B runs against logs tuned without it
 * (docs/PERFORMANCE.md, thirty-third session).
 *
 * <p>Otherwise (the interpreter, the JVM backend) one value per cache line is written to a buffer a quarter larger
 * than the last-level cache (8 MiB at least) from the measuring thread: that clears the shared cache and that
 * core's own, while the other cores' private caches keep what a parallel program left there, so it models a
 * network's cold weights only in part; {@link #describe()} says which one runs.
 */
final class CacheFlusher {
    private static final long FALLBACK_LLC_BYTES = 32L << 20;
    /**
     * {@code -Dkiln.measure.evictTemporaries=true} evicts the kernel's heap temporaries too (off by default: on
     * MobileNet-V2 at one thread, two seeds, it cost 12-22% of the trials in the same time and the network did not
     * run faster; docs/PERFORMANCE.md, sixteenth session).
     */
    static final String TEMPORARIES_PROPERTY = "kiln.measure.evictTemporaries";

    /**
     * {@code -Dkiln.measure.dirtyFill=false} leaves the caches clean before the evictions (the flush before the
     * thirty-third session); by default an evicting flusher fills them with modified lines first.
     */
    static final String DIRTY_PROPERTY = "kiln.measure.dirtyFill";

    private final CacheEviction eviction;
    private final boolean temporaries;
    /**
     * The buffer written one value per line before each timed run: the whole flush without eviction, the dirty fill
     * before the evictions with it; null for an evicting flusher without the fill.
     */
    private final MemorySegment buffer;

    private long round;

    /** A flusher that writes a buffer larger than the last-level cache (no eviction). */
    CacheFlusher() {
        this.eviction = null;
        this.temporaries = false;
        this.buffer = Arena.ofAuto().allocate(fillBytes(), 64);
    }

    /** A flusher that evicts the program's arguments with {@code eviction}, as the system properties say. */
    CacheFlusher(CacheEviction eviction) {
        this(
                eviction,
                Boolean.getBoolean(TEMPORARIES_PROPERTY),
                Boolean.parseBoolean(System.getProperty(DIRTY_PROPERTY, "true")));
    }

    /**
     * A flusher that evicts the program's arguments, and its heap temporaries where {@code temporaries}; where
     * {@code dirtyFill}, it first writes one value per cache line of a buffer a quarter larger than the last-level
     * cache, so the run starts with the caches full of modified lines that must be written back as it reads.
     */
    CacheFlusher(CacheEviction eviction, boolean temporaries, boolean dirtyFill) {
        this.eviction = java.util.Objects.requireNonNull(eviction, "eviction");
        this.temporaries = temporaries;
        this.buffer = dirtyFill ? Arena.ofAuto().allocate(fillBytes(), 64) : null;
    }

    /** A quarter more than the last-level cache, 8 MiB at least. */
    private static long fillBytes() {
        long llc = lastLevelCacheBytes();
        return Math.max(8L << 20, llc + llc / 4);
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
        if (!evicts()) return "a " + (buffer.byteSize() >> 20) + " MiB buffer written by the measuring thread";
        String fill = buffer == null
                ? ""
                : "the caches filled with " + (buffer.byteSize() >> 20) + " MiB of modified lines, then ";
        if (!temporaries)
            return fill + "every argument evicted from all cores' caches (clflush), heap temporaries left warm (-D"
                    + TEMPORARIES_PROPERTY + "=true evicts them)";
        return fill + "every argument and heap temporary evicted from all cores' caches (clflush)";
    }

    /** The size of the buffer written ({@code 0} for an evicting flusher). */
    long bytes() {
        return evicts() || buffer == null ? 0 : buffer.byteSize();
    }

    /**
     * Flushes before a timed run of a program on {@code args} whose calls take heap temporaries of the sizes
     * {@code temporaries} (bytes; {@link CompiledKernel#heapTemporaries}).
     */
    void flush(NDArray[] args, java.util.List<Long> temporaries) {
        if (buffer != null) {
            long v = ++round;
            for (long off = 0; off < buffer.byteSize(); off += 64) buffer.set(ValueLayout.JAVA_LONG, off, v + off);
        }
        if (eviction == null) return;
        for (NDArray a : args) if (a != null) eviction.evict(a.segment());
        if (this.temporaries) for (long bytes : temporaries) eviction.evictTemporaries(bytes);
    }

    /** The value the last fill wrote at byte {@code offset} of the dirty buffer (a multiple of 64; for tests). */
    long dirtyLine(long offset) {
        return buffer.get(ValueLayout.JAVA_LONG, offset) - offset;
    }

    /** The bytes of dirty lines an evicting flusher writes before its evictions (0: none). */
    long dirtyBytes() {
        return evicts() && buffer != null ? buffer.byteSize() : 0;
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
