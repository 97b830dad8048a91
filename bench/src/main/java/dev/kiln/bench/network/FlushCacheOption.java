package dev.kiln.bench.network;

import picocli.CommandLine.Option;

/**
 * {@code --flush-cache/--no-flush-cache} of the commands that tune whole networks ({@code ./kiln network-bench}
 * and so {@code ./kiln run}, {@code ./kiln onnx}): a picocli mixin. On by default, as {@code NetworkTuneOptions}:
 * every timed run starts with the program's arguments evicted from the CPU caches, so programs are ranked by
 * their speed on cold weights, as they run inside the network.
 */
public final class FlushCacheOption {
    @Option(
            names = "--flush-cache",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description = "Tune with every argument of a program evicted from the CPU caches before each timed run "
                    + "(TVM's enable_cpu_cache_flush), so programs are chosen by their speed on cold weights, as "
                    + "they run inside the network (default: on; --no-flush-cache times warm loops).")
    boolean flushCache = true;

    /** Whether timed runs start on cold caches. */
    public boolean enabled() {
        return flushCache;
    }

    /** The argument that passes this choice on to a child JVM's command line. */
    public String arg() {
        return flushCache ? "--flush-cache" : "--no-flush-cache";
    }

    /** How the tuner timed programs, for the result line. */
    public String describe() {
        return flushCache ? "caches flushed before every timed run" : "warm loops, no cache flush";
    }
}
