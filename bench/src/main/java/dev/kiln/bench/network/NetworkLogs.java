package dev.kiln.bench.network;

import java.nio.file.Path;

/**
 * The names of the benchmarks' tuning logs: one log per thread count ({@code tuning.jsonl} becomes
 * {@code tuning-2t.jsonl}, as programs tuned for one thread count are not the best for another), and a suffix before
 * the extension for a variant of a run ({@code -bf16}, a task scheduler strategy). Used by the network benchmark,
 * {@code ./kiln onnx} and the operator suite alike.
 */
public final class NetworkLogs {
    private NetworkLogs() {}

    /** {@code log} with {@code suffix} before its extension (or at its end when it has none). */
    public static Path withSuffix(Path log, String suffix) {
        String f = log.getFileName().toString();
        int dot = f.lastIndexOf('.');
        return log.resolveSibling(dot > 0 ? f.substring(0, dot) + suffix + f.substring(dot) : f + suffix);
    }

    /** The log of thread count {@code threads}: {@code log} with {@code -<threads>t} before its extension. */
    public static Path logFor(Path log, int threads) {
        String f = log.getFileName().toString();
        int dot = f.lastIndexOf('.');
        String name = dot > 0 ? f.substring(0, dot) + "-" + threads + "t" + f.substring(dot) : f + "-" + threads + "t";
        return log.resolveSibling(name);
    }
}
