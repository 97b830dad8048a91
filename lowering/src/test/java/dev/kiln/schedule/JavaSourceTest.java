package dev.kiln.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.te.ComputeDAG;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import javax.tools.JavaCompiler;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/** The Java source a schedule prints compiles and rebuilds an equal schedule. */
class JavaSourceTest {

    @Test
    void printedSourceRebuildsTheSchedule() throws Exception {
        ComputeDAG dag = Workloads.matmulRelu(32, 48, 20);
        Schedule sch = ScheduleDataTest.tiledMatmulRelu(dag);
        String body = sch.toJavaSource();
        assertThat(body).contains("s.stage(\"C\").cacheWrite(\"local\");").contains(".vectorize(\"j.1\");");
        String src = "package gen; import dev.kiln.schedule.*; import dev.kiln.te.ComputeDAG;\n"
                + "public class Rebuild implements java.util.function.Function<ComputeDAG, Schedule> {\n"
                + "  public Schedule apply(ComputeDAG dag) {\n" + body + "    return schedule;\n  }\n}\n";
        Schedule rebuilt = compileAndRun(src).apply(dag);
        assertThat(rebuilt).isEqualTo(sch);
    }

    /**
     * Where the generated class finds Kiln: this JVM's class path, and its module path when the tests run on it
     * (surefire patches them into dev.kiln.lowering, so Kiln's classes are not on the class path then).
     */
    private static List<String> javacOptions(String outDir) {
        List<String> options =
                new ArrayList<>(List.of("-d", outDir, "-classpath", System.getProperty("java.class.path")));
        String modulePath = System.getProperty("jdk.module.path");
        if (modulePath != null && !modulePath.isEmpty()) {
            options.addAll(List.of("--module-path", modulePath, "--add-modules", "dev.kiln.lowering"));
        }
        return options;
    }

    @SuppressWarnings("unchecked")
    static Function<ComputeDAG, Schedule> compileAndRun(String src) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        var out = java.nio.file.Files.createTempDirectory("kiln-src");
        SimpleJavaFileObject file =
                new SimpleJavaFileObject(
                        URI.create("string:///gen/Rebuild.java"), javax.tools.JavaFileObject.Kind.SOURCE) {
                    @Override
                    public CharSequence getCharContent(boolean ignore) {
                        return src;
                    }
                };
        var errors = new java.io.StringWriter();
        boolean ok = javac.getTask(errors, null, null, javacOptions(out.toString()), null, List.of(file))
                .call();
        assertThat(ok).as("javac: %s\n%s", errors, src).isTrue();
        try (var loader = new java.net.URLClassLoader(
                new java.net.URL[] {out.toUri().toURL()}, JavaSourceTest.class.getClassLoader())) {
            return (Function<ComputeDAG, Schedule>)
                    loader.loadClass("gen.Rebuild").getDeclaredConstructor().newInstance();
        }
    }
}
