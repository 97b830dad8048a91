package dev.kiln.autoschedule.measure;

import dev.kiln.ir.KilnException;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.module.ModuleFinder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line of a measuring child JVM: this JVM's java binary, its flags (minus a debugger
 * agent, which would fight over its port), the flags Kiln's backends need, this class path, and
 * {@link MeasureWorker}. The flags and class path go into an argument file, so a long class path
 * never meets the system's command-line limit; only {@code -Dkiln.measure.worker=true} stays on
 * the command line, to tell workers apart in a process list.
 */
final class WorkerCommand {
    private WorkerCommand() {}

    /** A system property set on the command line of every worker, so that {@code ps} shows what it is. */
    static final String ROLE_PROPERTY = "kiln.measure.worker";

    /** The java binary running this JVM. */
    static String javaBinary() {
        return ProcessHandle.current()
                .info()
                .command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /** The flags of this JVM a child should get too. */
    static List<String> inheritedFlags() {
        List<String> out = new ArrayList<>();
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("-agentlib:jdwp")
                    || a.startsWith("-Xrunjdwp")
                    || a.equals("-Xdebug")
                    || a.startsWith("-XX:ErrorFile=")
                    || a.startsWith("-XX:OnError=")
                    || a.startsWith("-Djava.class.path=")) {
                continue;
            }
            out.add(a);
        }
        return out;
    }

    /**
     * Writes the argument file into {@code dir} and returns the command: java, the inherited flags,
     * {@code --enable-native-access=ALL-UNNAMED} (the JIT's Panama calls), {@code --add-modules
     * jdk.incubator.vector} when this JDK has it (the JVM backend's vector code), crash logs into
     * {@code dir} and no core dumps, then {@code extraFlags}, the class path and the worker class.
     */
    static List<String> write(Path dir, List<String> extraFlags) {
        List<String> args = new ArrayList<>(inheritedFlags());
        if (args.stream().noneMatch(a -> a.startsWith("--enable-native-access")))
            args.add("--enable-native-access=ALL-UNNAMED");
        boolean hasVector = args.stream().anyMatch(a -> a.contains("jdk.incubator.vector"));
        if (!hasVector && ModuleFinder.ofSystem().find("jdk.incubator.vector").isPresent()) {
            args.add("--add-modules=jdk.incubator.vector");
        }
        args.add("-XX:ErrorFile=" + dir.resolve("hs_err_pid%p.log"));
        args.add("-XX:-CreateCoredumpOnCrash");
        args.addAll(extraFlags);
        args.add("-cp");
        args.add(System.getProperty("java.class.path"));
        args.add(MeasureWorker.class.getName());
        Path file = dir.resolve("worker.args");
        StringBuilder sb = new StringBuilder();
        for (String a : args) sb.append(quote(a)).append('\n');
        try {
            Files.writeString(file, sb);
        } catch (IOException e) {
            throw new KilnException("cannot write the measure worker's argument file " + file + ": " + e.getMessage());
        }
        return List.of(javaBinary(), "-D" + ROLE_PROPERTY + "=true", "@" + file);
    }

    /** One argument of a java {@code @argfile}: quoted, with backslashes and quotes escaped. */
    static String quote(String a) {
        return "\"" + a.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
