package dev.kiln.autoschedule.measure;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Evicts a program's data from the CPU caches between timed runs, so that every run starts cold
 * (TVM's {@code enable_cpu_cache_flush}): it writes one value per cache line of a buffer a quarter
 * larger than the last-level cache (8 MiB at least). It runs on the measuring thread, so it clears that core's private
 * caches and the shared last-level cache; other cores' private caches keep what a parallel
 * program left there.
 */
final class CacheFlusher {
    private static final long FALLBACK_LLC_BYTES = 32L << 20;

    private final MemorySegment buffer;
    private long round;

    CacheFlusher() {
        long llc = lastLevelCacheBytes();
        long bytes = Math.max(8L << 20, llc + llc / 4);
        buffer = Arena.ofAuto().allocate(bytes, 64);
    }

    long bytes() {
        return buffer.byteSize();
    }

    /** Writes every cache line of the buffer. */
    void flush() {
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
