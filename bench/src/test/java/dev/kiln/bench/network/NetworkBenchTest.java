package dev.kiln.bench.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The harness's small pieces (the command itself is exercised by a smoke run, not a test: it times things). */
class NetworkBenchTest {
    @Test
    void oneTuningLogPerThreadCount() {
        assertThat(NetworkLogs.logFor(Path.of("kiln-bench", "network", "tuning.jsonl"), 2))
                .isEqualTo(Path.of("kiln-bench", "network", "tuning-2t.jsonl"));
        assertThat(NetworkLogs.logFor(Path.of("log"), 1)).isEqualTo(Path.of("log-1t"));
    }

    @Test
    void networksByName() {
        assertThat(BenchNetworks.graphOf("resnet18-small", 1).name()).isEqualTo("resnet18");
        assertThatThrownBy(() -> BenchNetworks.graphOf("vgg", 1))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("resnet50, mobilenetv2");
    }

    @Test
    void theBfloat16RunReachesTheChildJvm() {
        NetworkBench nb = new NetworkBench();
        new picocli.CommandLine(nb).parseArgs("--bf16", "--bf16-tolerance", "0.1", "--bf16-activations", "BFLOAT16");
        String cmd = String.join(
                " ", NetworkChildCommand.of(nb, "kiln", "resnet18-small", "channels_last", 2, Path.of("rows.tsv")));
        assertThat(cmd).contains("--bf16 --bf16-tolerance 0.1 --bf16-activations BFLOAT16");
        NetworkBench plain = new NetworkBench();
        new picocli.CommandLine(plain).parseArgs();
        assertThat(String.join(
                        " ",
                        NetworkChildCommand.of(plain, "kiln", "resnet18-small", "channels_last", 2, Path.of("r.tsv"))))
                .doesNotContain("--bf16");
    }

    @Test
    void loadAverageIsThreeNumbersOrUnknown() {
        assertThat(BenchHost.loadAverage()).matches("\\?|[0-9.]+/[0-9.]+/[0-9.]+");
    }
}
