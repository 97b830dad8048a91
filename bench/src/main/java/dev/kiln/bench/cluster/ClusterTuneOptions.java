package dev.kiln.bench.cluster;

import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.ir.KilnException;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The options of a tuning command that measures on a cluster ({@code ./kiln tune --cluster HOST:PORT}, {@code ./kiln
 * onnx --cluster HOST:PORT}): a picocli mixin. With {@code --cluster} the command's measurer is a {@link
 * ClusterMeasurer} ({@link ClusterMeasurer#factory}): the tuner joins the cluster through the given nodes with the
 * cluster's key store, as a worker does, and its programs are measured by the workers of its target.
 */
public final class ClusterTuneOptions {
    @Option(
            names = "--cluster",
            paramLabel = "HOST:PORT",
            description = "Measure on a Kiln cluster: join it through this node (repeatable; a worker, ./kiln worker) "
                    + "and hand the programs to the workers of the target.")
    List<String> join = new ArrayList<>();

    @Option(
            names = "--cluster-host",
            paramLabel = "HOST",
            description = "With --cluster: the address the workers reach this tuner at (default: ${DEFAULT-VALUE}).")
    String host = "127.0.0.1";

    @Option(
            names = "--cluster-port",
            paramLabel = "PORT",
            description = "With --cluster: the port this tuner listens on, 0 for any (default: ${DEFAULT-VALUE}).")
    int port = 0;

    @Option(
            names = "--keystore",
            paramLabel = "P12",
            description = "With --cluster: the cluster's PKCS#12 key store (./kiln cluster-keys).")
    Path keyStore;

    @Option(
            names = "--password-file",
            paramLabel = "FILE",
            description = "With --cluster: a file holding the key store password (default: the environment variable "
                    + "KILN_CLUSTER_PASSWORD).")
    Path passwordFile;

    @Option(
            names = "--no-worker-timeout",
            paramLabel = "SECONDS",
            description = "With --cluster: fail when no worker of the target has been seen for this long "
                    + "(default: ${DEFAULT-VALUE}).")
    double noWorkerSeconds = 300;

    @Option(
            names = "--unreachable-after-ms",
            paramLabel = "MS",
            description = "With --cluster: how long a silent node is given (default: ${DEFAULT-VALUE}).")
    long unreachableMs = 5000;

    /** Whether {@code --cluster} was given. */
    public boolean enabled() {
        return !join.isEmpty();
    }

    /** The cluster options given without {@code --cluster} (they would be ignored): empty when none. */
    private String strayOption() {
        if (keyStore != null) return "--keystore";
        if (passwordFile != null) return "--password-file";
        return null;
    }

    /**
     * A cluster measurer for {@code target} (a tuner node that joins the cluster and leaves when the measurer is
     * closed); throws {@link KilnException} naming the option at fault.
     */
    public Measurer start(Target target, MeasureOptions options) {
        if (!enabled()) throw new KilnException("no --cluster given");
        if (keyStore == null) throw new KilnException("--cluster needs --keystore (the cluster's key store)");
        if (!(noWorkerSeconds > 0)) {
            throw new KilnException("--no-worker-timeout must be positive, got " + noWorkerSeconds);
        }
        ClusterSettings settings = ClusterSettings.of(host, port, join, keyStore, WorkerCommand.password(passwordFile))
                .withUnreachableAfter(Duration.ofMillis(unreachableMs));
        return ClusterMeasurer.factory(settings, Duration.ofMillis(Math.round(noWorkerSeconds * 1e3)))
                .create(target, options);
    }

    /** Throws when a key store option was given without {@code --cluster}, which would silently measure locally. */
    public void check() {
        String stray = strayOption();
        if (!enabled() && stray != null) {
            throw new KilnException(stray + " is for --cluster, which was not given (the programs would be measured "
                    + "on this machine)");
        }
    }

    /** These options as arguments, for a child JVM that runs the same command (an empty list without --cluster). */
    public List<String> args() {
        List<String> out = new ArrayList<>();
        if (!enabled()) return out;
        for (String j : join) out.addAll(List.of("--cluster", j));
        out.addAll(List.of("--cluster-host", host, "--cluster-port", Integer.toString(port)));
        if (keyStore != null) out.addAll(List.of("--keystore", keyStore.toString()));
        if (passwordFile != null) out.addAll(List.of("--password-file", passwordFile.toString()));
        out.addAll(List.of("--no-worker-timeout", Double.toString(noWorkerSeconds)));
        out.addAll(List.of("--unreachable-after-ms", Long.toString(unreachableMs)));
        return out;
    }

    /** The cluster's report of {@code m} when it is a cluster measurer (for the command's output), else null. */
    public static JobReport report(Measurer m) {
        return m instanceof ClusterMeasurer c ? c.report() : null;
    }
}
