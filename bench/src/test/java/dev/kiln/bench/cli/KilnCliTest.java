package dev.kiln.bench.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.awt.image.BufferedImage;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The command line: every subcommand answers {@code --help}; a tiny tune with {@code --json}
 * gives JSON whose numbers agree with each other and with the log; apply, inspect and plot read
 * that log back (JSON again); bad input ends with exit code 2 and a message naming the option.
 */
class KilnCliTest {
    static final ObjectMapper JSON = new ObjectMapper();

    record Run(int rc, String out, String err) {}

    static Run run(String... args) {
        StringWriter out = new StringWriter(), err = new StringWriter();
        CommandLine cl = KilnCli.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int rc = cl.execute(args);
        return new Run(rc, out.toString(), err.toString());
    }

    @Test
    void everySubcommandHasHelp() {
        List<List<String>> commands = List.of(
                List.<String>of(),
                List.of("tune"),
                List.of("apply"),
                List.of("inspect"),
                List.of("bench"),
                List.of("bench", "suite"),
                List.of("bench", "network"),
                List.of("bench", "onnx"),
                List.of("plot"),
                List.of("plot", "curve"),
                List.of("plot", "roofline"));
        for (List<String> cmd : commands) {
            String[] args = java.util.stream.Stream.concat(cmd.stream(), java.util.stream.Stream.of("--help"))
                    .toArray(String[]::new);
            Run r = run(args);
            assertThat(r.rc()).as("%s --help", cmd).isZero();
            assertThat(r.out()).as("%s --help", cmd).contains("Usage: kiln");
        }
        assertThat(run("--help").out()).contains("tune", "apply", "inspect", "bench", "plot");
    }

    @Test
    void aTinyTuneGivesJsonThatApplyInspectAndPlotReadBack(@TempDir Path tmp) throws Exception {
        Path log = tmp.resolve("gmm.jsonl");
        String[] gmm = {"--op", "GMM", "--config", "1,16,16,16"};
        Run tune = run(concat(
                new String[] {"tune"},
                gmm,
                "--trials",
                "4",
                "--per-round",
                "4",
                "--log",
                log.toString(),
                "--measure-in-process",
                "--progress",
                "none",
                "--json"));
        assertThat(tune.rc()).as(tune.err()).isZero();
        JsonNode t = JSON.readTree(tune.out());
        assertThat(t.get("workload").asText()).isEqualTo("GMM 1,16,16,16");
        assertThat(t.get("trials").asInt()).isEqualTo(4);
        assertThat(t.get("newTrials").asInt()).isEqualTo(4);
        assertThat(t.get("operations").asLong()).isEqualTo(2L * 16 * 16 * 16);
        assertThat(t.get("unit").asText()).isEqualTo("GFLOP/s");
        double seconds = t.get("bestSeconds").asDouble();
        assertThat(t.get("rate").asDouble()).isCloseTo(2.0 * 16 * 16 * 16 / seconds / 1e9, within(1e-6));
        assertThat(t.get("schedule").get("steps").isArray()).isTrue();

        Run apply = run(concat(new String[] {"apply"}, gmm, "--log", log.toString(), "--repeats", "3", "--json"));
        assertThat(apply.rc()).as(apply.err()).isZero();
        JsonNode a = JSON.readTree(apply.out());
        assertThat(a.get("ok").asBoolean()).isTrue();
        assertThat(a.get("maxAbsError").asDouble()).isLessThan(1e-3);
        assertThat(a.get("medianMs").asDouble()).isPositive();

        Run inspect = run(concat(
                new String[] {"inspect"}, gmm, "--log", log.toString(), "--show", "dag,java,ir,source", "--json"));
        assertThat(inspect.rc()).as(inspect.err()).isZero();
        JsonNode i = JSON.readTree(inspect.out());
        assertThat(i.get("dag").asText()).contains("batch_matmul");
        assertThat(i.get("java").asText()).contains("ScheduleBuilder");
        assertThat(i.get("ir").asText()).contains("func kiln_batch_matmul");
        assertThat(i.get("source").asText()).contains("define").contains("assembly");
        Run cuda = run(concat(new String[] {"inspect"}, gmm, "--target", "cuda", "--show", "source"));
        assertThat(cuda.rc()).as(cuda.err()).isZero();
        assertThat(cuda.out()).contains("__global__");

        Path png = tmp.resolve("curve.png");
        Run plot = run(concat(
                new String[] {"plot", "curve"},
                gmm,
                "--log",
                log.toString(),
                "--baseline",
                "ref=1.5",
                "-o",
                png.toString(),
                "--json"));
        assertThat(plot.rc()).as(plot.err()).isZero();
        JsonNode points = JSON.readTree(plot.out()).get("curves").get(0).get("points");
        assertThat(points.size()).isBetween(1, 4);
        for (int k = 1; k < points.size(); k++) {
            assertThat(points.get(k).get("bestRate").asDouble())
                    .isGreaterThanOrEqualTo(points.get(k - 1).get("bestRate").asDouble());
        }
        BufferedImage img = ImageIO.read(png.toFile());
        assertThat(img.getWidth()).isEqualTo(dev.kiln.bench.plot.CurveChart.WIDTH);
    }

    @Test
    void aLayoutFreeTuneIsInspectedUnderItsOwnKey(@TempDir Path tmp) throws Exception {
        Path log = tmp.resolve("c2d.jsonl");
        String[] c2d = {"--op", "C2D", "--config", "1,6,6,4,8,3,1,1"};
        Run tune = run(concat(
                new String[] {"tune"},
                c2d,
                "--layout-free",
                "--trials",
                "2",
                "--per-round",
                "2",
                "--log",
                log.toString(),
                "--measure-in-process",
                "--progress",
                "none",
                "--json"));
        assertThat(tune.rc()).as(tune.err()).isZero();
        assertThat(JSON.readTree(tune.out()).get("workloadKey").asText()).endsWith(" layout_free=[1]");
        Run plain = run(concat(new String[] {"inspect"}, c2d, "--log", log.toString(), "--show", "ir"));
        assertThat(plain.rc()).isEqualTo(2); // no record under the plain key
        Run inspect = run(concat(
                new String[] {"inspect"}, c2d, "--layout-free", "--log", log.toString(), "--show", "schedule,ir"));
        assertThat(inspect.rc()).as(inspect.err()).isZero();
        assertThat(inspect.out())
                .contains("best of " + log)
                .contains("func kiln_")
                .contains("weight: float32[");
        Run gmm = run("inspect", "--op", "GMM", "--layout-free", "--log", log.toString());
        assertThat(gmm.rc()).isEqualTo(2);
        assertThat(gmm.err()).contains("--layout-free").contains("no constant weight");
    }

    @Test
    void badInputEndsWithCode2AndNamesTheOption(@TempDir Path tmp) {
        Run r = run("tune", "--op", "XYZ", "--log", tmp.resolve("l.jsonl").toString());
        assertThat(r.rc()).isEqualTo(2);
        assertThat(r.err()).contains("unknown operator 'XYZ'");
        Run apply = run(
                "apply", "--op", "GMM", "--log", tmp.resolve("missing.jsonl").toString());
        assertThat(apply.rc()).isEqualTo(2);
        assertThat(apply.err()).contains("--log").contains("does not exist");
        Run target = run("inspect", "--op", "GMM", "--target", "tpu");
        assertThat(target.rc()).isEqualTo(2);
        assertThat(target.err()).contains("--target").contains("tpu");
        Run show = run("inspect", "--op", "GMM", "--show", "everything");
        assertThat(show.err()).contains("--show").contains("everything");
    }

    static String[] concat(String[] a, String[] b, String... rest) {
        return java.util.stream.Stream.of(a, b, rest)
                .flatMap(java.util.Arrays::stream)
                .toArray(String[]::new);
    }
}
