package dev.kiln.autoschedule.log;

import dev.kiln.ir.KilnException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Every measurement of a tuning run, kept as JSON lines ({@link LogFormat}) in a file, and the
 * records read from it. {@link #append} writes one line and flushes it before it returns, so a
 * tuner that crashes loses nothing it had measured. Reading skips, and reports in
 * {@link #skippedLines()}, lines it cannot use: the truncated last line a crash can leave (the
 * next append starts on a new line, so that line never corrupts a later record), lines of
 * another format version, blank lines and lines starting with {@code #}.
 *
 * <p>A log may hold records of many workloads and targets; {@link #lookup} and {@link #best}
 * only consider the records of one workload on one target, and say what else the log holds.
 */
public final class TuningLog implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(TuningLog.class.getName());

    /** A line of the file that was not read as a record, and why ({@code line} counts from 1). */
    public record SkippedLine(int line, String reason) {}

    private final Path file;
    private final List<LogRecord> records = new ArrayList<>();
    private final List<SkippedLine> skipped = new ArrayList<>();
    private boolean needsNewline;
    private OutputStream out;
    private boolean closed;

    private TuningLog(Path file) {
        this.file = file;
    }

    /**
     * The log kept in {@code file}: its records are read now (a missing file is an empty log) and
     * {@link #append} adds to its end. Unreadable lines are skipped with a warning.
     */
    public static TuningLog open(Path file) {
        Objects.requireNonNull(file, "file");
        TuningLog log = new TuningLog(file);
        if (Files.exists(file)) log.readExisting();
        return log;
    }

    /** A log kept only in memory (a tuning run without a log file). */
    public static TuningLog inMemory() {
        return new TuningLog(null);
    }

    /** The file, if the log is kept in one. */
    public Optional<Path> file() {
        return Optional.ofNullable(file);
    }

    /** Every record read or appended, in file order. */
    public synchronized List<LogRecord> records() {
        return List.copyOf(records);
    }

    /** The lines of the file that were not read as records. */
    public synchronized List<SkippedLine> skippedLines() {
        return Collections.unmodifiableList(new ArrayList<>(skipped));
    }

    /** The records of one workload on one target ({@link #sameTarget}), in file order. */
    public synchronized List<LogRecord> records(String workloadKey, String target) {
        return records.stream()
                .filter(r -> r.workloadKey().equals(workloadKey) && sameTarget(r.target(), target))
                .toList();
    }

    /** The fastest valid record of a workload on a target, if any. */
    public Optional<LogRecord> best(String workloadKey, String target) {
        return lookup(workloadKey, target).best();
    }

    /** The fastest valid record of a workload on a target, with what the log holds for it elsewhere. */
    public synchronized LogLookup lookup(String workloadKey, String target) {
        return LogLookup.of(file == null ? "the in-memory log" : "the log " + file, records, workloadKey, target);
    }

    /** Writes {@code r} as one line at the end of the file and flushes it; in memory, just keeps it. */
    public synchronized void append(LogRecord r) {
        if (closed) throw new KilnException("tuning log " + file + " is closed");
        String line = LogFormat.toLine(r) + "\n";
        if (file != null) {
            try {
                if (out == null) {
                    Path parent = file.toAbsolutePath().getParent();
                    if (parent != null) Files.createDirectories(parent);
                    out = Files.newOutputStream(
                            file, StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE);
                }
                if (needsNewline) {
                    line = "\n" + line;
                    needsNewline = false;
                }
                out.write(line.getBytes(StandardCharsets.UTF_8));
                out.flush();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot append to tuning log " + file, e);
            }
        }
        records.add(r);
    }

    /**
     * Whether two target strings name the same target: equal after parsing when both parse
     * ({@code dev.kiln.target.Target.parse}), else equal after trimming.
     */
    public static boolean sameTarget(String a, String b) {
        if (a.strip().equals(b.strip())) return true;
        try {
            return dev.kiln.target.Target.parse(a).equals(dev.kiln.target.Target.parse(b));
        } catch (KilnException e) {
            return false;
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (out != null) {
            try {
                out.close();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot close tuning log " + file, e);
            } finally {
                out = null;
            }
        }
    }

    private void readExisting() {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read tuning log " + file, e);
        }
        needsNewline = !text.isEmpty() && !text.endsWith("\n");
        String[] lines = text.split("\n", -1);
        int count = text.endsWith("\n") ? lines.length - 1 : lines.length;
        for (int i = 0; i < count; i++) {
            String line = lines[i];
            if (line.isBlank() || line.startsWith("#")) continue;
            boolean unterminated = i == count - 1 && needsNewline;
            try {
                records.add(LogFormat.parse(line));
            } catch (KilnException e) {
                String reason = (unterminated ? "truncated last line (a tuner stopped while writing it?): " : "")
                        + e.getMessage();
                skipped.add(new SkippedLine(i + 1, reason));
                LOG.log(System.Logger.Level.WARNING, "tuning log {0}, line {1} skipped: {2}", file, i + 1, reason);
            }
        }
    }
}
