package dev.kiln.bench.network;

import dev.kiln.bench.ChildJvm;
import java.nio.file.Path;
import java.util.List;

/**
 * The command line of one child JVM of {@link NetworkBench} (one thread count, one part: Kiln, or PyTorch for one
 * network and memory format): this JVM's java binary, flags and class path ({@link ChildJvm}), then
 * {@link NetworkBench} with the parent's options passed on as they are but for the child's networks, formats, thread
 * count and part.
 */
final class NetworkChildCommand {
    private NetworkChildCommand() {}

    /** The child's command line; it writes its table rows to {@code rowsFile}. */
    static List<String> of(NetworkBench o, String part, String networks, String formats, int threads, Path rowsFile) {
        List<String> cmd = ChildJvm.command(NetworkBench.class);
        cmd.addAll(List.of(
                "--network",
                networks,
                "--threads",
                String.valueOf(threads),
                "--trials",
                String.valueOf(o.trials),
                "--log",
                o.log.toString(),
                "--repeats",
                String.valueOf(o.repeats),
                "--warmup",
                String.valueOf(o.warmup),
                "--warmup-ms",
                String.valueOf(o.warmupMs),
                "--min-seconds",
                String.valueOf(o.minSeconds),
                "--torch-formats",
                formats,
                "--tolerance",
                String.valueOf(o.tolerance),
                "--seed",
                String.valueOf(o.seed),
                "--dir",
                o.dir.toString(),
                "--child-rows",
                rowsFile.toString(),
                "--time-budget",
                String.valueOf(o.timeBudget),
                "--per-round",
                String.valueOf(o.perRound),
                "--strategy",
                String.join(",", o.strategies),
                "--part",
                part,
                "--target",
                o.targetName,
                "--remeasure-top",
                String.valueOf(o.remeasureTop),
                "--remeasure-rounds",
                String.valueOf(o.remeasureRounds)));
        if (!o.profile) cmd.add("--no-profile");
        if (!o.unpacked) cmd.add("--no-unpacked");
        cmd.add(o.flushCache.arg());
        if (o.sharedModel) cmd.add("--shared-model");
        if (o.bf16) {
            cmd.addAll(List.of("--bf16", "--bf16-tolerance", String.valueOf(o.bf16Tolerance)));
            cmd.addAll(o.bf16Activations.args());
        }
        cmd.add(o.transfer.arg());
        cmd.add(o.fma.arg());
        if (o.pretrained != null) cmd.addAll(List.of("--pretrained", o.pretrained));
        return cmd;
    }
}
