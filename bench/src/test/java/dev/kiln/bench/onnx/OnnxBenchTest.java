package dev.kiln.bench.onnx;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.DType;
import dev.kiln.onnx.ModelWriter;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code ./kiln onnx} end to end on a small model the test writes: the first call tunes a handful of
 * trials and writes the log, the second builds from the log without search; both print the table
 * with ONNX Runtime's row and Kiln's (checked "ok" against ONNX Runtime) and exit 0. The timed runs
 * are cut to a few (the numbers are not looked at). Both calls run the per-thread-count step in this
 * JVM ({@code --child}) so the output can be read; the parent's own step is checked for its exit code.
 */
class OnnxBenchTest {

    /** Runs the command; returns its exit code and, in {@code out}, what it printed. */
    private static int run(StringBuilder out, String... args) {
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            return new CommandLine(new OnnxBench()).execute(args);
        } finally {
            System.setOut(old);
            out.append(buf.toString(StandardCharsets.UTF_8));
            old.print(buf.toString(StandardCharsets.UTF_8));
        }
    }

    private static String[] args(Path model, Path log, String... more) {
        List<String> a = new ArrayList<>(List.of(
                model.toString(),
                "--dim",
                "batch=2",
                "--threads",
                "1",
                "--trials",
                "4",
                "--per-round",
                "2",
                "--log",
                log.toString(),
                "--repeats",
                "3",
                "--warmup",
                "1",
                "--warmup-ms",
                "0",
                "--min-seconds",
                "0",
                "--int-high",
                "50"));
        a.addAll(List.of(more));
        return a.toArray(String[]::new);
    }

    @Test
    void tunesWritesTheLogThenAppliesItWithoutSearch(@TempDir Path dir) throws Exception {
        ModelWriter m = new ModelWriter("mlp", 17).input("ids", DType.INT64, "batch", 3L);
        String emb = m.node("Gather", new String[] {m.weight("table", 1, 0.5, 50, 16), "ids"}, "emb");
        String flat = m.node("Reshape", new String[] {emb, m.longs("shape", 0, 48)}, "flat");
        String h = m.node(
                "Relu",
                new String[] {
                    m.node(
                            "Gemm",
                            new String[] {flat, m.weight("w1", 2, 0.2, 24, 48), m.weight("b1", 3, 0.1, 24)},
                            "fc1",
                            "transB",
                            1L)
                },
                "h");
        m.node(
                "Gemm",
                new String[] {h, m.weight("w2", 4, 0.2, 10, 24), m.weight("b2", 5, 0.1, 10)},
                "logits",
                "transB",
                1L);
        Path model = m.output("logits").write(dir.resolve("mlp.onnx"));
        Path log = dir.resolve("mlp.jsonl"), threadLog = dir.resolve("mlp-1t.jsonl");

        StringBuilder first = new StringBuilder();
        assertThat(run(first, args(model, log, "--child", "--transfer")))
                .as(first.toString())
                .isZero();
        // the two dense tasks (with and without relu) are not similar: nothing to transfer
        assertThat(first).contains("transfer: 0 transferred trial(s)");
        assertThat(first).contains("tuned: ").contains("onnxruntime").containsPattern("(?m)^1 +kiln .* ok ");
        assertThat(threadLog).exists();
        List<String> logged = Files.readAllLines(threadLog);
        assertThat(logged).as("one JSON line per measured program").isNotEmpty().allMatch(l -> l.startsWith("{"));

        StringBuilder second = new StringBuilder();
        assertThat(run(second, args(model, log, "--child", "--cache-ab", "2", "--profile", "--rounds", "3")))
                .as(second.toString())
                .isZero();
        assertThat(second)
                .contains("as built (memory BEST_FIT)", "memory RECENT", "sum of minima")
                .doesNotContain("chunk(s) per thread") // one thread: no loop split to compare
                .contains("built from " + threadLog)
                // the per-layer comparison: both dense layers found in ONNX Runtime's profile by their outputs
                .contains("kernels against ONNX Runtime's own per-node profile")
                .containsPattern("(?m)^ +\\d+ +\\d+ +dense\\S* +logits .* Gemm")
                .containsPattern("matched: [2-9] Kiln calls .* against [2-9] ONNX Runtime nodes")
                .contains("no search")
                .doesNotContain("tuned: ")
                // --rounds: three rounds of ONNX Runtime then Kiln, each a row with Kiln's speed, and their median
                .contains("ONNX Runtime and Kiln in 3 alternating rounds")
                .containsPattern("(?m)^ +3 +\\d+\\.\\d{3} +\\d+\\.\\d{3} +\\d+\\.\\d{3}x ")
                .containsPattern("Kiln's speed over the rounds: median \\d+\\.\\d{3}x \\(.*\\); \\d of 3 rounds")
                .containsPattern("(?m)^1 +kiln .* ok ");
        assertThat(Files.readAllLines(threadLog))
                .as("applying the log measures nothing")
                .isEqualTo(logged);

        StringBuilder parent = new StringBuilder();
        assertThat(run(parent, args(model, log)))
                .as("the parent's exit code follows its child JVM's")
                .isZero();
        assertThat(parent).contains("1 inputs [ids[2, 3]:int64]").contains("== 1 thread(s): child JVM");
        assertThat(Files.readAllLines(threadLog)).isEqualTo(logged);
    }
}
