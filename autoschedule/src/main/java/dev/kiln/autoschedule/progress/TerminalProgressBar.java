package dev.kiln.autoschedule.progress;

import java.time.Duration;
import java.util.function.Consumer;
import me.tongfei.progressbar.DelegatingProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * The progress bar of a tuning run on the terminal (me.tongfei:progressbar, drawn on standard
 * error): trials done of the budget, elapsed time and the time left, the best GFLOP/s so far and
 * the number of errors. Redrawn a few times a second from the library's own thread.
 */
final class TerminalProgressBar implements TuneProgress {
    private final Consumer<String> sink;
    private ProgressBar bar;

    /** A bar on the terminal. */
    public TerminalProgressBar() {
        this(null);
    }

    /** A bar whose rendered lines go to {@code sink} (for tests); {@code null} for the terminal. */
    TerminalProgressBar(Consumer<String> sink) {
        this.sink = sink;
    }

    @Override
    public synchronized void start(String taskName, ProgressState state) {
        ProgressBarBuilder b = new ProgressBarBuilder()
                .setTaskName("tune " + taskName)
                .setInitialMax(state.total())
                .setStyle(ProgressBarStyle.ASCII)
                .setUpdateIntervalMillis(200)
                .setUnit(" trials", 1)
                .startsFrom(state.done(), Duration.ZERO);
        if (sink != null) b.setConsumer(new DelegatingProgressBarConsumer(sink, 160));
        bar = b.build();
        bar.setExtraMessage(state.summary());
    }

    @Override
    public synchronized void update(ProgressState state) {
        if (bar == null) return;
        bar.maxHint(state.total());
        bar.stepTo(state.done());
        bar.setExtraMessage(state.summary());
    }

    @Override
    public synchronized void close() {
        if (bar != null) {
            bar.close();
            bar = null;
        }
    }
}
