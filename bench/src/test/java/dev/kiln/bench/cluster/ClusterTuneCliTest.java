package dev.kiln.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.bench.cli.KilnCli;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code ./kiln tune --cluster HOST:PORT}: the CLI tunes an operator with its programs measured by a loopback worker
 * JVM (the seed), the log holds every trial once, checked, and the command's JSON says which worker measured them;
 * the key store options without {@code --cluster} are refused rather than ignored.
 */
class ClusterTuneCliTest {
    record Run(int rc, String out, String err) {}

    static Run run(String... args) {
        StringWriter out = new StringWriter(), err = new StringWriter();
        CommandLine cl = KilnCli.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return new Run(cl.execute(args), out.toString(), err.toString());
    }

    @Test
    void tuneMeasuresOnTheClustersWorker(@TempDir Path tmp) throws Exception {
        Path password = tmp.resolve("password");
        Files.writeString(password, ClusterFixture.PASSWORD);
        Path log = tmp.resolve("gmm.jsonl");
        try (ClusterFixture fx = new ClusterFixture()) {
            int port = LocalWorkers.freePort();
            fx.workers.start(1, null, port, ClusterFixture.args(), Duration.ofMinutes(2)); // the seed
            Run r = run(
                    "tune",
                    "--op",
                    "GMM",
                    "--config",
                    "1,16,16,16",
                    "--trials",
                    "6",
                    "--per-round",
                    "6",
                    "--log",
                    log.toString(),
                    "--progress",
                    "none",
                    "--json",
                    "--cluster",
                    "127.0.0.1:" + port,
                    "--keystore",
                    fx.keyStore.toString(),
                    "--password-file",
                    password.toString(),
                    "--unreachable-after-ms",
                    Long.toString(ClusterFixture.UNREACHABLE.toMillis()),
                    "--no-worker-timeout",
                    "120");
            assertThat(r.rc()).as(r.err()).isZero();
            JsonNode t = new ObjectMapper().readTree(r.out());
            assertThat(t.get("trials").asInt()).isEqualTo(6);
            assertThat(t.get("errors").asInt()).isZero();
            JsonNode c = t.get("cluster");
            long logged;
            try (TuningLog l = TuningLog.open(log)) {
                var trials = l.records().stream().filter(x -> !x.isRemeasure()).toList();
                assertThat(trials).hasSize(6);
                assertThat(trials).allMatch(x -> x.isValid());
                logged = l.records().size();
            }
            // every measurement of the run (its trials and the re-measurements of the best) went to the worker
            assertThat(c.get("completed").asLong()).isEqualTo(logged);
            assertThat(c.get("faults")).isEmpty();
            List<String> workers = iterate(c.get("byWorker").fieldNames());
            assertThat(workers).hasSize(1);
            assertThat(workers.getFirst()).contains(":" + port + "/");
            assertThat(c.get("byWorker").get(workers.getFirst()).asLong()).isEqualTo(logged);
        }
    }

    @Test
    void keyStoreOptionsWithoutClusterAreRefused(@TempDir Path tmp) {
        Run r = run(
                "tune",
                "--op",
                "GMM",
                "--config",
                "1,16,16,16",
                "--log",
                tmp.resolve("l.jsonl").toString(),
                "--keystore",
                tmp.resolve("k.p12").toString());
        assertThat(r.rc()).isEqualTo(2);
        assertThat(r.err()).contains("--keystore is for --cluster");
    }

    static List<String> iterate(java.util.Iterator<String> it) {
        List<String> out = new java.util.ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }
}
