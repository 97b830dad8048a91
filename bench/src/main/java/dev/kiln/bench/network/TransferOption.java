package dev.kiln.bench.network;

import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.transfer.TransferReport;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * {@code --transfer/--no-transfer}, schedule transfer between similar tasks, of the commands that tune whole networks
 * ({@code ./kiln network-bench}, {@code ./kiln onnx}): a picocli mixin. On by default.
 */
public final class TransferOption {
    @Option(
            names = "--transfer",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description = "Schedule transfer between similar tasks: each starting task's first round is led by the "
                    + "adapted fastest programs of the similar tasks measured before it (default: on; "
                    + "--no-transfer tunes every task from scratch).")
    boolean transfer = true;

    /** Whether tuning transfers schedules between similar tasks. */
    public boolean enabled() {
        return transfer;
    }

    /** The argument that passes this choice on to a child JVM's command line. */
    public String arg() {
        return transfer ? "--transfer" : "--no-transfer";
    }

    /** Prints what transfer did in the tuning log {@code log} ({@link TransferReport}), marked when it was off. */
    public void printReport(Path log) {
        try (TuningLog l = TuningLog.open(log)) {
            System.out.println((transfer ? "" : "(--no-transfer) ")
                    + TransferReport.of(l.records()).describe());
        }
    }
}
