package dev.kiln.bench.cluster;

import dev.kiln.autoschedule.measure.FaultInjection;
import dev.kiln.ir.KilnException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code ./kiln worker}: starts a measurement worker and runs until it is stopped. */
@Command(
        name = "worker",
        mixinStandardHelpOptions = true,
        description = "Start a measurement worker: it joins the cluster, advertises its target and measures the "
                + "programs of tuners of that target, one at a time, each in a child JVM.")
final class WorkerCommand implements Callable<Integer> {
    /** The line a worker prints on standard output once it is an up member (the tests wait for it). */
    static final String READY = "kiln worker ready";

    @Option(
            names = "--join",
            description = "HOST:PORT of a cluster node to join through (repeatable); none to "
                    + "start a new cluster with this worker as its seed")
    List<String> join = new ArrayList<>();

    @Option(names = "--host", description = "the address other nodes reach this worker at (default: ${DEFAULT-VALUE})")
    String host = "127.0.0.1";

    @Option(names = "--port", description = "the port to listen on, 0 for any (default: ${DEFAULT-VALUE})")
    int port = 2552;

    @Option(
            names = "--keystore",
            required = true,
            description = "the cluster's PKCS#12 key store (./kiln " + "cluster-keys)")
    Path keyStore;

    @Option(
            names = "--password-file",
            description = "a file holding the key store password (default: the "
                    + "environment variable KILN_CLUSTER_PASSWORD)")
    Path passwordFile;

    @Option(
            names = "--target",
            description = "the target to measure on (default: this machine's CPU, detected); 'cuda' for this "
                    + "machine's first GPU (its architecture and limits, detected), or a full CUDA target string")
    String target;

    @Option(
            names = "--simulate",
            description = "measure simulated programs only, by sleeping their recorded "
                    + "time (for ./kiln cluster-bench); advertises the target 'simulated' (or "
                    + "'simulated:' and --target)")
    boolean simulate;

    @Option(
            names = "--corrupt-references",
            hidden = true,
            description =
                    "fault injection for tests: damage the " + "reference outputs so that this worker's checks fail")
    boolean corrupt;

    @Option(
            names = "--fault-injection",
            paramLabel = "KIND@N",
            description =
                    "test hook, not for production: make this worker's child JVM crash (KIND crash: libc abort()) "
                            + "or hang past the time-out (KIND hang) on the Nth program it measures, counted from 1 "
                            + "(repeatable), to test crash and hang isolation")
    List<String> faultInjection = new ArrayList<>();

    @Option(
            names = "--unreachable-after-ms",
            description = "how long a silent node is given (default: " + "${DEFAULT-VALUE})")
    long unreachableMs = 5000;

    @Option(
            names = "--queue",
            description = "programs the worker holds at once, the one it measures included: 2 asks for the next "
                    + "program while measuring, so no round trip is waited between two; 1 asks only when idle "
                    + "(default: ${DEFAULT-VALUE})")
    int queue = 2;

    @Option(names = "--child-jvm-flag", description = "a flag for the measuring child JVM (repeatable), e.g. -Xmx8g")
    List<String> childFlags = new ArrayList<>();

    @Override
    public Integer call() {
        WorkerTarget advertised = WorkerTarget.of(target, simulate); // a CUDA worker without a GPU stops here
        String t = advertised.target();
        ClusterSettings settings = ClusterSettings.of(host, port, join, keyStore, password(passwordFile))
                .withUnreachableAfter(Duration.ofMillis(unreachableMs));
        WorkerActor.Options workerOptions =
                new WorkerActor.Options(simulate, corrupt, childFlags, queue, faults(faultInjection));
        var stopping = new java.util.concurrent.atomic.AtomicReference<ClusterNode>();
        var shuttingDown = new java.util.concurrent.atomic.AtomicBoolean();
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            shuttingDown.set(true);
                            ClusterNode n = stopping.get();
                            if (n != null) n.close();
                        },
                        "kiln-worker-leave"));
        // a worker removed from the cluster (unreachable too long: an overloaded machine, a network cut) joins again
        while (!shuttingDown.get()) {
            ClusterNode node = ClusterNode.start(settings, List.of("worker"));
            stopping.set(node);
            node.spawn(WorkerActor.create(t, workerOptions), "worker");
            if (!node.awaitUp(Duration.ofSeconds(60))) {
                System.err.println("kiln worker: not admitted to the cluster through " + settings.seeds()
                        + " within 60 s (is the key store the cluster's? is a seed running?)");
            }
            System.out.println(READY + " " + node.address() + " target " + t + " (" + advertised.description() + ")");
            System.out.flush();
            CountDownLatch stopped = new CountDownLatch(1);
            node.system().getWhenTerminated().thenRun(stopped::countDown);
            try {
                stopped.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return 1;
            }
            if (shuttingDown.get()) break;
            System.err.println("kiln worker: removed from the cluster; joining again in 2 s");
            ClusterNode.sleep(2000);
        }
        return 0;
    }

    /** {@code --fault-injection} values ({@code crash@3}) by program number. */
    static Map<Integer, FaultInjection.Kind> faults(List<String> specs) {
        Map<Integer, FaultInjection.Kind> out = new HashMap<>();
        for (String s : specs) {
            int at = s.indexOf('@');
            int n;
            try {
                n = at < 0 ? -1 : Integer.parseInt(s.substring(at + 1).strip());
            } catch (NumberFormatException e) {
                n = -1;
            }
            if (n < 1) {
                throw new KilnException("--fault-injection '" + s + "': expected KIND@N, KIND crash or hang, N >= 1");
            }
            if (out.put(n, FaultInjection.Kind.parse(s.substring(0, at))) != null) {
                throw new KilnException("--fault-injection '" + s + "': program " + n + " has two faults");
            }
        }
        return out;
    }

    /** The key store password from {@code file}, else from {@code KILN_CLUSTER_PASSWORD}. */
    static String password(Path file) {
        if (file != null) {
            try {
                return Files.readString(file, StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                throw new KilnException("cannot read the password file " + file + ": " + e.getMessage());
            }
        }
        String p = System.getenv("KILN_CLUSTER_PASSWORD");
        if (p == null || p.isEmpty()) {
            throw new KilnException("no key store password: give --password-file or set KILN_CLUSTER_PASSWORD");
        }
        return p;
    }
}
