package dev.kiln.bench.cli;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * The CLI's progress for a tuning run, shown as programs are measured: a {@link Measurer} that
 * passes batches to the real one a few programs at a time and after each part updates a progress
 * bar (on a terminal, me.tongfei:progressbar) or prints a line every few seconds (elsewhere: CI
 * logs, pipes, files), on standard error so that standard output stays machine-readable.
 */
final class CliProgress implements Measurer {

    /** What a run shows. */
    enum Mode {
        /** A bar when {@code System.console()} is a terminal, else lines. */
        AUTO,
        BAR,
        LINES,
        NONE;

        Mode resolve() {
            if (this != AUTO) return this;
            java.io.Console c = System.console();
            return c != null && c.isTerminal() ? BAR : LINES;
        }
    }

    /** Programs passed to the real measurer at once, so that progress moves inside a round. */
    static final int CHUNK = 8;

    private final Measurer inner;
    private final String name;
    private final int total;
    private final Mode mode;
    private final PrintStream err;
    private final double intervalSeconds;
    private final long start = System.nanoTime();
    private ProgressBar bar;
    private long lastLine = System.nanoTime();
    private int measured, errors;

    CliProgress(Measurer inner, String name, int total, Mode mode, PrintStream err, double intervalSeconds) {
        this.inner = inner;
        this.name = name;
        this.total = total;
        this.mode = mode.resolve();
        this.err = err;
        this.intervalSeconds = intervalSeconds;
        if (this.mode == Mode.BAR) {
            bar = new ProgressBarBuilder()
                    .setTaskName("tune " + name)
                    .setInitialMax(total)
                    .setStyle(ProgressBarStyle.ASCII)
                    .setUpdateIntervalMillis(200)
                    .setUnit(" trials", 1)
                    .startsFrom(0, Duration.ZERO)
                    .build();
        }
    }

    @Override
    public Target target() {
        return inner.target();
    }

    @Override
    public MeasureOptions options() {
        return inner.options();
    }

    /** The real measurer's, so that a measurer that compiles a batch in parallel gets whole batches. */
    @Override
    public int batchSize() {
        return inner.batchSize();
    }

    /** The real measurer's: a wrapped asynchronous measurer (a cluster) keeps its overlapping rounds. */
    @Override
    public boolean asynchronous() {
        return inner.asynchronous();
    }

    /**
     * An asynchronous measurer gets the whole batch at once (in parts, one batch would be measured a part at a time)
     * and the progress moves when it completes; a synchronous one measures it here, a part at a time.
     */
    @Override
    public CompletableFuture<List<MeasureResult>> submit(SearchTask task, List<Schedule> schedules) {
        if (!inner.asynchronous()) return CompletableFuture.completedFuture(measure(task, schedules));
        return inner.submit(task, schedules).thenApply(rs -> {
            report(rs);
            return rs;
        });
    }

    @Override
    public void prepare(List<SearchTask> tasks, int threads) {
        inner.prepare(tasks, threads);
    }

    @Override
    public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
        if (inner.asynchronous()) {
            try {
                return submit(task, schedules).join();
            } catch (CompletionException e) {
                if (e.getCause() instanceof RuntimeException r) throw r;
                throw e;
            }
        }
        List<MeasureResult> out = new ArrayList<>(schedules.size());
        int chunk = Math.max(CHUNK, inner.batchSize());
        for (int i = 0; i < schedules.size(); i += chunk) {
            List<MeasureResult> part = inner.measure(task, schedules.subList(i, Math.min(schedules.size(), i + chunk)));
            out.addAll(part);
            report(part);
        }
        return out;
    }

    private synchronized void report(List<MeasureResult> part) {
        measured += part.size();
        for (MeasureResult r : part) if (!r.ok()) errors++;
        double elapsed = (System.nanoTime() - start) / 1e9;
        switch (mode) {
            case BAR -> {
                bar.maxHint(Math.max(total, measured));
                bar.stepTo(measured);
                bar.setExtraMessage(errors == 0 ? "" : errors + " error(s)");
            }
            case LINES -> {
                if ((System.nanoTime() - lastLine) / 1e9 >= intervalSeconds) {
                    lastLine = System.nanoTime();
                    err.println(line(elapsed));
                    err.flush();
                }
            }
            default -> {}
        }
    }

    private String line(double elapsed) {
        return String.format(
                Locale.ROOT,
                "tune %s: %d measurement(s) this run (trial budget %d, re-measurements included), %d error(s), %.0f s",
                name,
                measured,
                total,
                errors,
                elapsed);
    }

    /** Programs measured through this measurer. */
    synchronized int measured() {
        return measured;
    }

    @Override
    public void close() {
        try {
            inner.close();
        } finally {
            synchronized (this) {
                if (bar != null) {
                    bar.close();
                    bar = null;
                } else if (mode == Mode.LINES) {
                    err.println(line((System.nanoTime() - start) / 1e9) + ", done");
                }
            }
        }
    }

    static Mode parse(String s) {
        try {
            return Mode.valueOf(s.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new KilnException("--progress: '" + s + "' is not one of auto, bar, lines, none");
        }
    }
}
