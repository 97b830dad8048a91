package dev.kiln.autoschedule.progress;

import java.util.List;

/**
 * Shows a tuning run's progress: told when the run starts, after every measured program, after
 * every round, and when it ends. {@link #forRun} picks what a run shows: a {@link TerminalProgressBar} when asked for
 * and standard error is a terminal, a line per round through {@link System.Logger} when verbose,
 * both, or nothing.
 */
public interface TuneProgress extends AutoCloseable {

    /** The run of {@code taskName} starts with {@code state} (trials restored from a log count as done). */
    void start(String taskName, ProgressState state);

    /** A program has been measured. */
    void update(ProgressState state);

    /** A round (a batch of programs) has been measured; by default, nothing more to show. */
    default void roundDone(ProgressState state) {}

    /** The run is over; what it showed is finished off. */
    @Override
    void close();

    /** Shows nothing. */
    static TuneProgress none() {
        return new TuneProgress() {
            @Override
            public void start(String taskName, ProgressState state) {}

            @Override
            public void update(ProgressState state) {}

            @Override
            public void close() {}
        };
    }

    /**
     * What a run shows: the progress bar if {@code bar} is on and this process has a terminal
     * ({@link #hasTerminal()}), a logged line per round if {@code verbose} is on.
     */
    static TuneProgress forRun(boolean bar, boolean verbose) {
        TuneProgress shown = bar && hasTerminal() ? new TerminalProgressBar() : none();
        return verbose ? both(shown, new LoggedProgress()) : shown;
    }

    /** Whether the JVM is attached to an interactive terminal (not a pipe, a file or a test runner). */
    static boolean hasTerminal() {
        java.io.Console c = System.console();
        return c != null && c.isTerminal();
    }

    /** Shows through both {@code a} and {@code b}. */
    static TuneProgress both(TuneProgress a, TuneProgress b) {
        List<TuneProgress> all = List.of(a, b);
        return new TuneProgress() {
            @Override
            public void start(String taskName, ProgressState state) {
                for (TuneProgress p : all) p.start(taskName, state);
            }

            @Override
            public void update(ProgressState state) {
                for (TuneProgress p : all) p.update(state);
            }

            @Override
            public void roundDone(ProgressState state) {
                for (TuneProgress p : all) p.roundDone(state);
            }

            @Override
            public void close() {
                for (TuneProgress p : all) p.close();
            }
        };
    }
}
