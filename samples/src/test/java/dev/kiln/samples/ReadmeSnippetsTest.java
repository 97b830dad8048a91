package dev.kiln.samples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code ```java} block of the README compiles against the current code, with only the
 * imports it shows: its {@code import} lines become the imports of a class, the rest the body of a
 * method. Variables a snippet takes from an earlier one (or, for a block that is a sample's code, the
 * sample method's parameters) are declared in an HTML comment on the line before it
 * ({@code <!-- snippet context: dev.kiln.te.ComputeDAG dag -->}, or
 * {@code <!-- sample: tune; snippet context: int n -->}) and become the method's parameters.
 * Snippets without context that only build computations (no tuning, no big arrays) are also run.
 */
class ReadmeSnippetsTest {
    private static final String CONTEXT_KEY = "snippet context";

    @TempDir
    Path out;

    /** One java block: where it starts, its imports, its body and its context parameters. */
    record Snippet(int line, List<String> imports, List<String> body, String params) {
        String className() {
            return "ReadmeSnippet" + line;
        }

        String source() {
            StringBuilder sb = new StringBuilder();
            imports.forEach(i -> sb.append(i).append('\n'));
            sb.append("public class ").append(className()).append(" {\n");
            sb.append("    public static void run(").append(params).append(") throws Exception {\n");
            body.forEach(b -> sb.append("        ").append(b).append('\n'));
            sb.append("    }\n}\n");
            return sb.toString();
        }

        /** Runs in a moment: no context, no tuning, no network, nothing compiled natively. */
        boolean quick() {
            String all = String.join("\n", body);
            return params.isEmpty()
                    && !all.contains("tune(")
                    && !all.contains("Models.")
                    && !all.contains("OnnxImporter")
                    && !all.contains("Interpreter.run")
                    && !all.contains("Backend")
                    && !all.contains("TuneOptions");
        }
    }

    static Path readme() {
        Path p = Path.of("README.md").toAbsolutePath();
        return Files.exists(p) ? p : Path.of("..", "README.md").toAbsolutePath().normalize();
    }

    /**
     * The value of {@code key} in an HTML comment line of {@code key: value} parts separated by
     * semicolons ({@code <!-- sample: tune; snippet context: int n -->}), or "" when absent.
     */
    static String comment(String line, String key) {
        String l = line.strip();
        if (!l.startsWith("<!--") || !l.endsWith("-->")) return "";
        for (String part : l.substring(4, l.length() - 3).split(";")) {
            String p = part.strip();
            if (p.startsWith(key + ":")) return p.substring(key.length() + 1).strip();
        }
        return "";
    }

    static List<Snippet> snippets() throws IOException {
        List<String> lines = Files.readAllLines(readme());
        List<Snippet> out = new ArrayList<>();
        for (int n = 0; n < lines.size(); n++) {
            if (!lines.get(n).strip().equals("```java")) continue;
            String params = n > 0 ? comment(lines.get(n - 1), CONTEXT_KEY) : "";
            List<String> imports = new ArrayList<>();
            List<String> body = new ArrayList<>();
            int start = n + 1;
            for (n = start; !lines.get(n).strip().equals("```"); n++) {
                String l = lines.get(n);
                if (l.startsWith("import ")) imports.add(l);
                else body.add(l);
            }
            out.add(new Snippet(start, imports, body, params));
        }
        return out;
    }

    @TestFactory
    Stream<DynamicTest> everyJavaBlockOfTheReadmeCompilesWithTheImportsItShows() throws IOException {
        List<Snippet> all = snippets();
        assertThat(all).hasSizeGreaterThanOrEqualTo(10);
        return all.stream().map(s -> DynamicTest.dynamicTest("README line " + s.line(), () -> compileAndMaybeRun(s)));
    }

    private void compileAndMaybeRun(Snippet s) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        Path dir = Files.createDirectories(out.resolve(s.className()));
        try (StandardJavaFileManager fm = javac.getStandardFileManager(diagnostics, Locale.ROOT, null)) {
            JavaFileObject src =
                    new SimpleJavaFileObject(
                            URI.create("string:///" + s.className() + ".java"), JavaFileObject.Kind.SOURCE) {
                        @Override
                        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                            return s.source();
                        }
                    };
            // on the module path (surefire patches the tests into dev.kiln.samples) Kiln is not on the class path
            String modulePath = System.getProperty("jdk.module.path");
            boolean modular = modulePath != null && !modulePath.isEmpty();
            List<String> options = new ArrayList<>(List.of(
                    "-classpath",
                    System.getProperty("java.class.path"),
                    "-d",
                    dir.toString(),
                    "-proc:none",
                    "--add-modules",
                    modular ? "jdk.incubator.vector,dev.kiln.samples" : "jdk.incubator.vector"));
            if (modular) options.addAll(List.of("--module-path", modulePath));
            boolean ok = javac.getTask(null, fm, diagnostics, options, null, List.of(src))
                    .call();
            StringBuilder errors = new StringBuilder();
            for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                if (d.getKind() == Diagnostic.Kind.ERROR) {
                    errors.append("snippet line ")
                            .append(d.getLineNumber())
                            .append(": ")
                            .append(d.getMessage(Locale.ROOT))
                            .append('\n');
                }
            }
            assertThat(ok)
                    .as("README snippet at line %d does not compile:%n%s%n%s", s.line(), errors, s.source())
                    .isTrue();
        }
        if (s.quick()) {
            try (var loader = new java.net.URLClassLoader(
                    new java.net.URL[] {dir.toUri().toURL()}, getClass().getClassLoader())) {
                Method run = loader.loadClass(s.className()).getMethod("run");
                run.invoke(null);
            }
        }
    }
}
