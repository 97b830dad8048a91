package dev.kiln.bench.cluster;

import dev.kiln.ir.KilnException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Worker JVMs on this machine's loopback interface, for the tests and {@code ./kiln cluster-bench}: each runs
 * {@code ClusterCli worker} with this JVM's java binary and class path, its output going to a file in {@code logDir}.
 */
public final class LocalWorkers implements AutoCloseable {
    /** One worker process. */
    public record Worker(Process process, String address, Path log) {
        /** Kills the worker's JVM at once (its child JVM stops with it), as a crash would. */
        public void kill() {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private final Path keyStore;
    private final String password;
    private final Path logDir;
    private final List<Worker> workers = new ArrayList<>();

    public LocalWorkers(Path keyStore, String password, Path logDir) {
        this.keyStore = keyStore;
        this.password = password;
        this.logDir = logDir;
    }

    /** A free port on the loopback interface (free when asked; a race with other programs is possible). */
    public static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new KilnException("no free port: " + e.getMessage());
        }
    }

    public List<Worker> workers() {
        synchronized (workers) {
            return List.copyOf(workers);
        }
    }

    /**
     * Starts {@code n} workers joining {@code join} ({@code host:port}; null for the first to start a new cluster on
     * {@code seedPort} that the others join) with {@code extraArgs}; waits until each is an up member. Several threads
     * may start workers at once.
     */
    public List<Worker> start(int n, String join, int seedPort, List<String> extraArgs, Duration timeout) {
        List<CompletableFuture<Worker>> started = new ArrayList<>();
        if (join == null) {
            Worker seed = launch(null, seedPort, extraArgs).join();
            synchronized (workers) {
                workers.add(seed);
            }
            join = seed.address();
            n--;
        }
        for (int i = 0; i < n; i++) started.add(launch(join, 0, extraArgs));
        List<Worker> out = new ArrayList<>();
        for (CompletableFuture<Worker> f : started) {
            try {
                Worker w = f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                out.add(w);
                synchronized (workers) {
                    workers.add(w);
                }
            } catch (Exception e) {
                throw new KilnException("a local worker did not start: " + e.getMessage());
            }
        }
        return out;
    }

    private CompletableFuture<Worker> launch(String join, int port, List<String> extraArgs) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // a simulated worker only sleeps: the C1 compiler is enough and starts faster
        if (extraArgs.contains("--simulate")) cmd.add("-XX:TieredStopAtLevel=1");
        cmd.addAll(List.of(
                "-Xmx384m",
                "-XX:+UseSerialGC",
                "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow",
                "-cp",
                System.getProperty("java.class.path"),
                ClusterCli.class.getName(),
                "worker",
                "--host",
                "127.0.0.1",
                "--port",
                Integer.toString(port),
                "--keystore",
                keyStore.toString()));
        if (join != null) cmd.addAll(List.of("--join", join));
        cmd.addAll(extraArgs);
        Path log;
        Process p;
        try {
            Files.createDirectories(logDir);
            log = Files.createTempFile(logDir, "worker-", ".log");
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().put("KILN_CLUSTER_PASSWORD", password);
            p = pb.start();
        } catch (IOException e) {
            throw new KilnException("cannot start a local worker: " + e.getMessage());
        }
        CompletableFuture<Worker> ready = new CompletableFuture<>();
        Thread t = new Thread(
                () -> {
                    try (BufferedReader in = new BufferedReader(
                                    new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                            PrintWriter out = new PrintWriter(Files.newBufferedWriter(log), true)) {
                        String line;
                        while ((line = in.readLine()) != null) {
                            out.println(line);
                            if (line.startsWith(WorkerCommand.READY)) {
                                String address = line.substring(WorkerCommand.READY.length())
                                        .trim()
                                        .split(" ")[0];
                                ready.complete(new Worker(p, address, log));
                            }
                        }
                    } catch (IOException e) {
                        // the worker's output is gone with it
                    }
                    ready.completeExceptionally(new KilnException("worker exited ("
                            + p.onExit().join().exitValue() + ") before it was " + "ready; its output: " + log));
                },
                "kiln-local-worker-" + p.pid());
        t.setDaemon(true);
        t.start();
        return ready;
    }

    /** Stops every worker (asks them to leave, then kills what is left after 5 s). */
    @Override
    public void close() {
        List<Worker> all = workers();
        for (Worker w : all) w.process().destroy();
        for (Worker w : all) {
            try {
                if (!w.process().waitFor(5, TimeUnit.SECONDS)) w.kill();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                w.kill();
            }
        }
        synchronized (workers) {
            workers.clear();
        }
    }
}
