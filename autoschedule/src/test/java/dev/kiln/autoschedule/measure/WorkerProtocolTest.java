package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.lower.LowerDefault;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.json.PrimFuncJson;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The request and reply lines, and the worker's argument file. */
class WorkerProtocolTest {

    @Test
    void requestsCarryTheProgramOptionsAndWorkload() {
        MeasureOptions o = new MeasureOptions(7, 3, 2, 12.5, true, 9.25, false, 1e-6, 2e-7, -5);
        PrimFunc f = LowerDefault.lower("f", Fixtures.matmul(3, 4, 5));
        var req = WorkerProtocol.parse(WorkerProtocol.measureRequest(42, "cpu -x", "/tmp/w b.bin", o, f));
        assertThat(req.path("op").asText()).isEqualTo("measure");
        assertThat(req.path("id").asLong()).isEqualTo(42);
        assertThat(req.path("workload").asText()).isEqualTo("/tmp/w b.bin");
        assertThat(WorkerProtocol.options(req.path("options"))).isEqualTo(o);
        assertThat(PrimFuncJson.fromTree(req.get("func")).toString()).isEqualTo(f.toString());
        assertThat(WorkerProtocol.parse(WorkerProtocol.exitRequest()).path("op").asText())
                .isEqualTo("exit");
    }

    @Test
    void repliesRoundTrip() {
        var r = new WorkerProtocol.Reply(
                3, MeasureError.WRONG_RESULT, "output 'C' differs\nbadly", new double[] {1e-6, 2.5e-6}, 0.25, true);
        String line = WorkerProtocol.reply(r);
        assertThat(line).startsWith(WorkerProtocol.PREFIX).doesNotContain("\n");
        var back = WorkerProtocol.parseReply(WorkerProtocol.parse(line.substring(WorkerProtocol.PREFIX.length())));
        assertThat(back.id()).isEqualTo(3);
        assertThat(back.error()).isEqualTo(MeasureError.WRONG_RESULT);
        assertThat(back.message()).isEqualTo(r.message());
        assertThat(back.costs()).containsExactly(1e-6, 2.5e-6);
        assertThat(back.compileSeconds()).isEqualTo(0.25);
        assertThat(back.exiting()).isTrue();
        assertThat(WorkerProtocol.parse(WorkerProtocol.ready(17).substring(WorkerProtocol.PREFIX.length()))
                        .path("protocol")
                        .asText())
                .isEqualTo(WorkerProtocol.VERSION);
    }

    @Test
    void theArgumentFileQuotesAndKeepsTheClassPath() throws Exception {
        assertThat(WorkerCommand.quote("a b\\c\"d")).isEqualTo("\"a b\\\\c\\\"d\"");
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("kiln-cmd-test");
        try {
            List<String> cmd = WorkerCommand.write(dir, List.of("-Xmx256m"));
            assertThat(cmd).hasSize(3);
            assertThat(cmd.get(1)).isEqualTo("-Dkiln.measure.worker=true");
            assertThat(cmd.get(2)).isEqualTo("@" + dir.resolve("worker.args"));
            String args = java.nio.file.Files.readString(dir.resolve("worker.args"));
            assertThat(args)
                    .contains("\"--enable-native-access=ALL-UNNAMED\"")
                    .contains("\"-Xmx256m\"")
                    .contains("\"-XX:-CreateCoredumpOnCrash\"")
                    .contains(MeasureWorker.class.getName())
                    .contains(WorkerCommand.quote(System.getProperty("java.class.path")));
        } finally {
            Fixtures.deleteTree(dir);
        }
    }
}
