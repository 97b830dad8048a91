package dev.kiln.bench.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import dev.kiln.ir.KilnException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * How a node (tuner or worker) joins a Kiln measurement cluster: its own address, the seed nodes it joins through,
 * and the key store that proves it belongs. Every link is Pekko Artery over TLS 1.3 with mutual authentication: a
 * node whose certificate the others do not trust (or a node without TLS) cannot connect, so it can neither join nor
 * send work. The key store holds the node's key and certificate and is also the trust store (one cluster
 * certificate, made by {@link ClusterKeys#generate}); keep it and its password as secret as an SSH key.
 *
 * @param host            the address this node is reached at (and binds to)
 * @param port            its port, 0 for any free one
 * @param seeds           {@code host:port} of the nodes to join through; empty to start a new cluster (this node is
 *                        then its own seed)
 * @param keyStore        the PKCS#12 key store (key, certificate, trusted certificate)
 * @param password        its password
 * @param unreachableAfter how long a silent node is given before it counts as unreachable (its programs go to
 *                        others), then again before it is removed from the cluster
 */
public record ClusterSettings(
        String host, int port, List<String> seeds, Path keyStore, String password, Duration unreachableAfter) {

    /** The name of the Pekko actor system on every node: nodes of one cluster must share it. */
    public static final String SYSTEM_NAME = "kiln";

    public ClusterSettings {
        Objects.requireNonNull(host, "host");
        seeds = List.copyOf(seeds);
        Objects.requireNonNull(keyStore, "keyStore");
        Objects.requireNonNull(password, "password");
        Objects.requireNonNull(unreachableAfter, "unreachableAfter");
        if (port < 0 || port > 65535) throw new KilnException("cluster port must be 0..65535, got " + port);
        for (String s : seeds) parseHostPort(s);
        if (!Files.isReadable(keyStore)) {
            throw new KilnException("cluster key store " + keyStore + " is missing or unreadable (make one with "
                    + "`./kiln cluster-keys DIR` and copy it to every node)");
        }
        if (unreachableAfter.toMillis() < 500) {
            throw new KilnException("unreachableAfter must be at least 500 ms, got " + unreachableAfter);
        }
    }

    /** A node on {@code host:port} joining through {@code seeds}, detecting a silent node after 5 s. */
    public static ClusterSettings of(String host, int port, List<String> seeds, Path keyStore, String password) {
        return new ClusterSettings(host, port, seeds, keyStore, password, Duration.ofSeconds(5));
    }

    public ClusterSettings withUnreachableAfter(Duration d) {
        return new ClusterSettings(host, port, seeds, keyStore, password, d);
    }

    /** Checks {@code HOST:PORT}; returns the port. */
    static int parseHostPort(String s) {
        int colon = s.lastIndexOf(':');
        if (colon <= 0) throw new KilnException("cluster address '" + s + "' is not HOST:PORT");
        try {
            int p = Integer.parseInt(s.substring(colon + 1));
            if (p < 1 || p > 65535) throw new NumberFormatException();
            return p;
        } catch (NumberFormatException e) {
            throw new KilnException("cluster address '" + s + "' has no valid port");
        }
    }

    /** The Pekko configuration of the node, on top of the defaults of the class path. */
    public Config config(List<String> roles) {
        long pauseMs = unreachableAfter.toMillis();
        String ks = keyStore.toAbsolutePath().toString();
        Config c = ConfigFactory.parseString("""
                pekko {
                  # warnings (a node unreachable or downed, a refused TLS handshake) through SLF4J (slf4j-simple)
                  loglevel = WARNING
                  stdout-loglevel = WARNING
                  log-dead-letters = off
                  log-dead-letters-during-shutdown = off
                  actor {
                    provider = cluster
                    allow-java-serialization = off
                    serializers { kiln = "dev.kiln.bench.cluster.MessageSerializer" }
                    serialization-bindings { "dev.kiln.bench.cluster.ClusterMessage" = kiln }
                  }
                  remote.artery {
                    transport = tls-tcp
                    advanced.maximum-frame-size = 1 MiB
                    ssl.config-ssl-engine {
                      protocol = "TLSv1.3"
                      enabled-algorithms = ["TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256"]
                      require-mutual-authentication = on
                      hostname-verification = off
                    }
                  }
                  cluster {
                    downing-provider-class = "org.apache.pekko.cluster.sbr.SplitBrainResolverProvider"
                    split-brain-resolver {
                      active-strategy = keep-majority
                    }
                    jmx.enabled = off
                    log-info = off
                  }
                  coordinated-shutdown.exit-jvm = off
                  # Artery's JFR events cost seconds of start-up (the JFR type library) and are not read
                  java-flight-recorder.enabled = false
                }
                """);
        c = c.withValue("pekko.remote.artery.canonical.hostname", ConfigValueFactory.fromAnyRef(host))
                .withValue("pekko.remote.artery.canonical.port", ConfigValueFactory.fromAnyRef(port))
                .withValue("pekko.remote.artery.ssl.config-ssl-engine.key-store", ConfigValueFactory.fromAnyRef(ks))
                .withValue("pekko.remote.artery.ssl.config-ssl-engine.trust-store", ConfigValueFactory.fromAnyRef(ks))
                .withValue(
                        "pekko.remote.artery.ssl.config-ssl-engine.key-store-password",
                        ConfigValueFactory.fromAnyRef(password))
                .withValue(
                        "pekko.remote.artery.ssl.config-ssl-engine.key-password",
                        ConfigValueFactory.fromAnyRef(password))
                .withValue(
                        "pekko.remote.artery.ssl.config-ssl-engine.trust-store-password",
                        ConfigValueFactory.fromAnyRef(password))
                .withValue(
                        "pekko.cluster.failure-detector.acceptable-heartbeat-pause",
                        ConfigValueFactory.fromAnyRef(pauseMs + "ms"))
                .withValue(
                        "pekko.cluster.failure-detector.heartbeat-interval",
                        ConfigValueFactory.fromAnyRef(Math.min(1000, pauseMs / 3) + "ms"))
                .withValue(
                        "pekko.cluster.split-brain-resolver.stable-after",
                        ConfigValueFactory.fromAnyRef(pauseMs + "ms"))
                .withValue("pekko.cluster.roles", ConfigValueFactory.fromIterable(roles));
        return c.withFallback(ConfigFactory.load());
    }

    /** The seed nodes as Pekko addresses ({@code pekko://kiln@host:port}); this node itself when there are none. */
    List<String> seedAddresses(String selfHost, int selfPort) {
        List<String> s = seeds.isEmpty() ? List.of(selfHost + ":" + selfPort) : seeds;
        return s.stream().map(a -> "pekko://" + SYSTEM_NAME + "@" + a).toList();
    }
}
