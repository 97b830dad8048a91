package dev.kiln.autoschedule.measure;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kiln.ir.KilnException;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One running {@link MeasureWorker} child JVM, seen from the parent: it starts the process, sends
 * request lines, waits for the reply with a time-out, and tells a reply from a death (with the
 * exit status and the last lines the child printed) or a time-out. Two daemon threads drain the
 * child's standard output (replies, and other lines kept as diagnostics) and standard error.
 */
final class WorkerProcess implements AutoCloseable {
    /** Diagnostic lines kept (the last ones the child printed). */
    private static final int DIAGNOSTIC_LINES = 200;

    private static final String EOF = "\u0000eof";

    /** What waiting for a reply gave. */
    sealed interface Answer {
        record Replied(JsonNode reply) implements Answer {}

        record Died(String reason) implements Answer {}

        record TimedOut() implements Answer {}
    }

    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();
    private final Deque<String> diagnostics = new ArrayDeque<>();
    private final Thread stdoutReader;
    private final Thread stderrReader;
    private final Path crashDir;

    private WorkerProcess(Process process, Path crashDir) {
        this.process = process;
        this.crashDir = crashDir;
        this.stdin = new BufferedWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8));
        this.stdoutReader = drain(process.getInputStream(), true, "kiln-measure-stdout-" + process.pid());
        this.stderrReader = drain(process.getErrorStream(), false, "kiln-measure-stderr-" + process.pid());
    }

    /**
     * Starts {@code command} and waits up to {@code startSeconds} for its ready line; throws a
     * {@link KilnException} with the child's output if it does not come.
     */
    static WorkerProcess start(List<String> command, Path crashDir, double startSeconds) {
        Process p;
        try {
            p = new ProcessBuilder(command).start();
        } catch (IOException e) {
            throw new KilnException("cannot start the measure worker (" + command.getFirst() + "): " + e.getMessage());
        }
        WorkerProcess w = new WorkerProcess(p, crashDir);
        Answer a = w.await(startSeconds);
        if (a instanceof Answer.Replied r
                && r.reply().path("ready").asBoolean()
                && WorkerProtocol.VERSION.equals(r.reply().path("protocol").asText())) {
            return w;
        }
        String why =
                switch (a) {
                    case Answer.Replied r ->
                        "it answered " + r.reply() + " instead of a " + WorkerProtocol.VERSION + " ready line";
                    case Answer.Died d -> d.reason();
                    case Answer.TimedOut t -> "it was not ready after " + startSeconds + " s";
                };
        w.kill();
        throw new KilnException("the measure worker did not start: " + why + w.diagnosticTail(20));
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Sends one request line and waits for its answer. */
    Answer request(String line, double timeoutSeconds) {
        send(line);
        return await(timeoutSeconds);
    }

    /** Sends one request line (a child that is gone shows in the next {@link #await}). */
    void send(String line) {
        try {
            stdin.write(line);
            stdin.write('\n');
            stdin.flush();
        } catch (IOException e) {
            // the child is gone; its death is reported by await
        }
    }

    /** The next line the child answers, waiting up to {@code timeoutSeconds}. */
    Answer await(double timeoutSeconds) {
        String line;
        try {
            line = replies.poll((long) Math.ceil(timeoutSeconds * 1000), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
            throw new KilnException("interrupted while waiting for the measure worker");
        }
        if (line == null) return new Answer.TimedOut();
        if (line.equals(EOF)) return new Answer.Died(deathReason());
        try {
            return new Answer.Replied(WorkerProtocol.parse(line));
        } catch (KilnException e) {
            kill();
            return new Answer.Died("it wrote a malformed reply (" + e.getMessage() + ")");
        }
    }

    /** Asks the child to exit; kills it if it has not after a second. */
    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                stdin.write(WorkerProtocol.exitRequest());
                stdin.write('\n');
                stdin.flush();
                stdin.close();
            } catch (IOException e) {
                // already going away
            }
            try {
                if (!process.waitFor(1, TimeUnit.SECONDS)) kill();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                kill();
            }
        }
    }

    /** Kills the child at once and waits for it to be gone. */
    void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Why the child ended: its exit status or signal, the fatal-error summary, the last lines it printed. */
    private String deathReason() {
        int status;
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) kill();
            stderrReader.join(2000);
            stdoutReader.join(2000);
            status = process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
            return "it ended (interrupted while waiting for its status)";
        }
        StringBuilder sb = new StringBuilder("the worker process ended with ").append(status(status));
        List<String> lines = diagnosticLines();
        int fatal = indexOf(lines, "A fatal error has been detected");
        if (fatal >= 0) {
            for (int i = fatal + 1; i < lines.size() && i <= fatal + 20; i++) {
                String l = lines.get(i).replaceFirst("^#\\s*", "").trim();
                if (l.startsWith("SIGSEGV")
                        || l.startsWith("SIGBUS")
                        || l.startsWith("SIGILL")
                        || l.startsWith("SIGFPE")
                        || l.startsWith("Internal Error")
                        || l.startsWith("Out of Memory")
                        || l.contains("outside the Java")) {
                    sb.append("; ").append(l);
                } else if (l.startsWith("Problematic frame") && i + 1 < lines.size()) {
                    sb.append("; problematic frame ")
                            .append(lines.get(i + 1).replaceFirst("^#\\s*", "").trim());
                }
            }
            crashLog().ifPresent(f -> sb.append("; crash log ").append(f));
        } else {
            sb.append(diagnosticTail(8));
        }
        return sb.toString();
    }

    private Optional<Path> crashLog() {
        Path f = crashDir.resolve("hs_err_pid" + process.pid() + ".log");
        return Files.exists(f) ? Optional.of(f) : Optional.empty();
    }

    private static String status(int s) {
        if (s > 128 && s < 128 + 65) {
            int sig = s - 128;
            String name =
                    switch (sig) {
                        case 4 -> "SIGILL";
                        case 6 -> "SIGABRT";
                        case 7 -> "SIGBUS";
                        case 8 -> "SIGFPE";
                        case 9 -> "SIGKILL";
                        case 11 -> "SIGSEGV";
                        case 15 -> "SIGTERM";
                        default -> "signal " + sig;
                    };
            return "status " + s + " (" + name + ")";
        }
        return "exit status " + s;
    }

    private static int indexOf(List<String> lines, String text) {
        for (int i = 0; i < lines.size(); i++) if (lines.get(i).contains(text)) return i;
        return -1;
    }

    private List<String> diagnosticLines() {
        synchronized (diagnostics) {
            return new ArrayList<>(diagnostics);
        }
    }

    /** The last {@code n} non-blank lines the child printed, as "; output: a | b | c" (empty if none). */
    String diagnosticTail(int n) {
        List<String> lines =
                diagnosticLines().stream().filter(l -> !l.isBlank()).toList();
        if (lines.isEmpty()) return "";
        return "; output: " + String.join(" | ", lines.subList(Math.max(0, lines.size() - n), lines.size()));
    }

    private Thread drain(InputStream s, boolean protocol, String name) {
        Thread t = new Thread(
                () -> {
                    try (BufferedReader r = new BufferedReader(new InputStreamReader(s, StandardCharsets.UTF_8))) {
                        String line;
                        while ((line = r.readLine()) != null) {
                            if (protocol && line.startsWith(WorkerProtocol.PREFIX)) {
                                replies.add(line.substring(WorkerProtocol.PREFIX.length()));
                            } else {
                                synchronized (diagnostics) {
                                    diagnostics.addLast(line);
                                    if (diagnostics.size() > DIAGNOSTIC_LINES) diagnostics.removeFirst();
                                }
                            }
                        }
                    } catch (IOException e) {
                        // the stream closed with the process
                    } finally {
                        if (protocol) replies.add(EOF);
                    }
                },
                name);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
