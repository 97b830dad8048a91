package dev.kiln.samples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.cuda.compile.CudaCompiler;
import dev.kiln.cuda.compile.Nvcc;
import dev.kiln.cuda.compile.Nvrtc;
import dev.kiln.ir.KilnException;
import dev.kiln.samples.examples.ApplyLog;
import dev.kiln.samples.examples.Argmax;
import dev.kiln.samples.examples.Compile;
import dev.kiln.samples.examples.CustomComputation;
import dev.kiln.samples.examples.Inspect;
import dev.kiln.samples.examples.JvmBackend;
import dev.kiln.samples.examples.NetworkExample;
import dev.kiln.samples.examples.OnnxModel;
import dev.kiln.samples.examples.Samples;
import dev.kiln.samples.examples.ScheduleByHand;
import dev.kiln.samples.examples.Tune;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README cannot drift from the samples: every README block marked {@code <!-- sample: NAME -->}
 * is, line for line, the code between {@code // readme:begin} and {@code // readme:end} of that
 * sample's class (indentation aside), its imports are the class's, every sample has its block, and
 * every sample runs on a small size (each checks its own numbers against the interpreter, plain Java
 * loops or the other backend, and throws if they differ). ReadmeSnippetsTest compiles the same
 * blocks with only the imports they show.
 */
class ReadmeSamplesTest {
    private static final String BEGIN = "// readme:begin";
    private static final String END = "// readme:end";

    @TempDir
    Path dir;

    /** A README block that is a sample's code. */
    record Block(int line, String sample, List<String> imports, List<String> body) {}

    static List<Block> blocks() throws IOException {
        List<Block> out = new ArrayList<>();
        for (ReadmeSnippetsTest.Snippet s : ReadmeSnippetsTest.snippets()) {
            List<String> lines = Files.readAllLines(ReadmeSnippetsTest.readme());
            String name = ReadmeSnippetsTest.comment(lines.get(s.line() - 2), "sample");
            if (!name.isEmpty()) out.add(new Block(s.line(), name, s.imports(), s.body()));
        }
        return out;
    }

    static Path source(Class<?> type) {
        String rel = "src/main/java/" + type.getName().replace('.', '/') + ".java";
        Path p = Path.of(rel).toAbsolutePath();
        return Files.exists(p) ? p : Path.of("samples", rel).toAbsolutePath();
    }

    /** Lines without leading and trailing blank lines, the common indentation removed, trailing spaces cut. */
    static List<String> normalise(List<String> lines) {
        int from = 0, to = lines.size();
        while (from < to && lines.get(from).isBlank()) from++;
        while (to > from && lines.get(to - 1).isBlank()) to--;
        List<String> l = lines.subList(from, to);
        int indent = l.stream()
                .filter(x -> !x.isBlank())
                .mapToInt(x -> x.length() - x.stripLeading().length())
                .min()
                .orElse(0);
        return l.stream()
                .map(x -> x.isBlank() ? "" : x.substring(indent).stripTrailing())
                .toList();
    }

    static List<String> region(Path source) throws IOException {
        List<String> lines = Files.readAllLines(source);
        int b = -1, e = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).strip().equals(BEGIN)) b = i;
            if (lines.get(i).strip().equals(END)) e = i;
        }
        assertThat(b).as("%s has a '%s' line", source, BEGIN).isNotNegative();
        assertThat(e).as("%s has a '%s' line after it", source, END).isGreaterThan(b);
        return lines.subList(b + 1, e);
    }

    @TestFactory
    Stream<DynamicTest> everySampleBlockOfTheReadmeIsTheSamplesCode() throws IOException {
        List<Block> blocks = blocks();
        assertThat(blocks.stream().map(Block::sample))
                .as("one README block per sample")
                .containsExactlyInAnyOrderElementsOf(
                        Samples.ALL.stream().map(Samples.Sample::name).toList());
        return blocks.stream()
                .map(b -> DynamicTest.dynamicTest("README line " + b.line() + ": " + b.sample(), () -> {
                    Path src = source(Samples.find(b.sample()).type());
                    List<String> readme = normalise(b.body());
                    List<String> code = normalise(region(src));
                    assertThat(readme)
                            .as(
                                    "README block at line %d is not the code of %s between '%s' and '%s'",
                                    b.line(), src, BEGIN, END)
                            .containsExactlyElementsOf(code);
                    List<String> sourceImports = Files.readAllLines(src).stream()
                            .filter(l -> l.startsWith("import "))
                            .toList();
                    assertThat(sourceImports)
                            .as("the imports of README block at line %d", b.line())
                            .containsAll(b.imports());
                }));
    }

    @Test
    void samplesListsEveryExampleAndRejectsAnUnknownName() {
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            Samples.run(new String[0]);
        } finally {
            System.setOut(old);
        }
        String listing = buf.toString(StandardCharsets.UTF_8);
        for (Samples.Sample s : Samples.ALL) assertThat(listing).contains(s.name());
        assertThatThrownBy(() -> Samples.run(new String[] {"nope"}))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("no sample 'nope'")
                .hasMessageContaining("compile");
        assertThatThrownBy(() -> Samples.run(new String[] {"compile", "-3"}))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("argument 1 '-3'");
    }

    @Test
    void theComputationSamplesRunOnSmallSizes() {
        Compile.run(16);
        CustomComputation.run(5);
        Argmax.run(3, 17);
        ScheduleByHand.run(32);
        JvmBackend.run(100);
    }

    @Test
    void theInspectSampleShowsLlvmIrAssemblyAndCudaC() {
        assumeTrue(
                Nvrtc.availability().available() || Nvcc.find().isPresent(),
                "no CUDA C compiler here: " + CudaCompiler.describe());
        String out = captured(() -> Inspect.run(8));
        assertThat(out).contains("define").contains("__global__").contains("for (");
    }

    @Test
    void theTuneSampleWritesALogThatTheApplySampleBuilds() {
        Path log = dir.resolve("tuning.jsonl");
        String out = captured(() -> Tune.run(32, 4, log));
        assertThat(out).contains("best").contains("GFLOP/s");
        assertThat(log).exists();
        ApplyLog.run(32, log);
    }

    @Test
    void theNetworkAndOnnxSamplesTuneAndMatchTheReferenceExecutor() {
        NetworkExample.run(2, 3, dir.resolve("mlp.jsonl")); // 3 tasks, one trial each
        OnnxModel.run(OnnxModel.writeSmallModel(dir.resolve("mlp.onnx")), 3);
    }

    private static String captured(Runnable r) {
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            r.run();
        } finally {
            System.setOut(old);
        }
        return buf.toString(StandardCharsets.UTF_8);
    }
}
