package dev.kiln.autoschedule.progress;

/**
 * A tuning run's progress as one {@link System.Logger} line (level INFO) at the start and after
 * every round, when the verbose option is on (also where there is no terminal for the bar).
 */
final class LoggedProgress implements TuneProgress {
    private static final System.Logger LOG = System.getLogger("dev.kiln.autoschedule.tune");
    private String taskName = "";

    @Override
    public void start(String taskName, ProgressState state) {
        this.taskName = taskName;
        LOG.log(System.Logger.Level.INFO, "tune {0}: starting at {1}", taskName, state.line());
    }

    @Override
    public void update(ProgressState state) {}

    @Override
    public void roundDone(ProgressState state) {
        LOG.log(System.Logger.Level.INFO, "tune {0}: {1}", taskName, state.line());
    }

    @Override
    public void close() {}
}
