package dev.kiln.bench.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A cluster key store, a tuner node and local worker JVMs for the tests; silent nodes count as unreachable after
 * 20 s (the test machines are shared and often overloaded).
 */
final class ClusterFixture implements AutoCloseable {
    static final Duration UNREACHABLE = Duration.ofMillis(20000);
    static final String PASSWORD = "kiln-test-secret";
    static final List<String> FAST = List.of("--unreachable-after-ms", Long.toString(UNREACHABLE.toMillis()));

    final Path dir;
    final Path keyStore;
    final LocalWorkers workers;

    ClusterFixture() throws IOException {
        dir = Files.createTempDirectory("kiln-cluster-test-");
        keyStore = ClusterKeys.generate(dir.resolve("cluster.p12"), PASSWORD, "kiln-test");
        workers = new LocalWorkers(keyStore, PASSWORD, dir.resolve("logs"));
    }

    ClusterSettings settings(int port, List<String> seeds) {
        return ClusterSettings.of("127.0.0.1", port, seeds, keyStore, PASSWORD).withUnreachableAfter(UNREACHABLE);
    }

    /** A tuner node that starts a new cluster. */
    ClusterNode seedTuner() {
        ClusterNode n = ClusterNode.start(settings(LocalWorkers.freePort(), List.of()), List.of("tuner"));
        n.awaitUp(Duration.ofSeconds(30));
        return n;
    }

    static List<String> args(String... more) {
        List<String> a = new java.util.ArrayList<>(FAST);
        a.addAll(List.of(more));
        return a;
    }

    @Override
    public void close() {
        workers.close();
    }
}
