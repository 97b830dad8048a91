package dev.kiln.autoschedule.scheduler;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.evolution.EvolutionarySearchPolicy;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.measure.MeasurerProviders;
import dev.kiln.autoschedule.model.CostModel;
import dev.kiln.autoschedule.search.SearchPolicy;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.ir.KilnException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * The options of the {@link TaskScheduler} (and of the {@link SchedulerLoop} under it). Build with
 * {@link #builder()}. Defaults: {@link Strategy#GRADIENT} with Ansor's alpha 0.2, beta 2 and
 * backward window 3; 1000 trials in all, 64 per round; seed 0; no log file; no per-task or
 * global early stopping; no eps-greedy task choice (Ansor's code has none; the paper's
 * Algorithm 1 has one); the objective {@link Objective#weightedSum()}; one
 * {@link EvolutionarySearchPolicy} per task, <b>each with its own cost model</b>
 * ({@code sharedCostModel} false); measurement by {@link MeasurerProviders#start} (a child JVM on
 * a CPU); rounds overlap only when every task's measurer is asynchronous (a cluster); no progress
 * table, no latency TSV.
 *
 * @param strategy             how the next task is chosen
 * @param trials               the trial budget over all tasks, counting the trials already in the log
 * @param measuresPerRound     programs measured per round at most; a round measures
 *                             {@code min(measuresPerRound, trials / #tasks)}
 * @param seed                 the seed of the task choice and of every task's policy
 * @param alpha                weight of the backward (measured) gradient against the forward (guessed) one
 * @param beta                 how far (as a factor of throughput) a task may trail its similarity group
 * @param backwardWindow       rounds over which the backward gradient is measured
 * @param perTaskEarlyStopping a task is dead once {@code rounds since its best x per-round > this} (0: never)
 * @param earlyStopping        stop when the objective has not improved in this many trials (0: never)
 * @param taskEpsGreedy        probability of giving the round to a uniformly random live task instead
 *                             of the gradient's choice (the paper's Algorithm 1; 0: never, as Ansor's code)
 * @param objective            the end-to-end estimate to minimise
 * @param logFile              the tuning log shared by all tasks (resumed from), or null for memory only
 * @param latencyTsv           where to write the objective after every round (Ansor's total_latency.tsv), or null
 * @param policies             the search policy of a task with its own cost model
 * @param sharedCostModel      whether all tasks' policies share one cost model (made by {@code sharedModel})
 * @param sharedModel          makes the shared cost model from the seed
 * @param sharedModelPolicies  the search policy of a task guided by the shared model
 * @param measureOptions       how programs are timed
 * @param measurers            makes a measurer per target (from the task's target string)
 * @param measurer             one measurer for every task instead (not closed by the scheduler), or null
 * @param listener             told after every round, or null
 * @param verbose              print the progress table to standard output after every round
 * @param timeBudget           stop starting rounds once this much time has passed ({@link java.time.Duration#ZERO}: no
 *                             limit); checked after the warm-up, which always completes so every task has a program
 * @param overlapRounds        whether to start the next round (another task's) while the last one measures, so that
 *                             a measurer with its own workers ({@link Measurer#asynchronous()}, a cluster) never
 *                             waits for the tail of a round; results are applied in the order the rounds started (see
 *                             {@link SchedulerLoop}). By default {@link RoundOverlap#WHEN_ASYNCHRONOUS}: on with a
 *                             cluster measurer, round by round with the local one
 * @param transferPrograms     schedule transfer between similar tasks: when a task starts, its first batch is led by
 *                             up to this many of the fastest programs of the tasks with its structural key measured so
 *                             far, adapted to it ({@link dev.kiln.autoschedule.transfer.TransferPolicy}); 0 (the
 *                             default) turns it off
 */
public record TaskSchedulerOptions(
        Strategy strategy,
        int trials,
        int measuresPerRound,
        long seed,
        double alpha,
        double beta,
        int backwardWindow,
        int perTaskEarlyStopping,
        int earlyStopping,
        double taskEpsGreedy,
        Objective objective,
        Path logFile,
        Path latencyTsv,
        TuneOptions.PolicyFactory policies,
        boolean sharedCostModel,
        ModelFactory sharedModel,
        SharedModelPolicyFactory sharedModelPolicies,
        MeasureOptions measureOptions,
        TuneOptions.MeasurerFactory measurers,
        Measurer measurer,
        SchedulerListener listener,
        boolean verbose,
        java.time.Duration timeBudget,
        RoundOverlap overlapRounds,
        int transferPrograms) {

    /** Makes the cost model all tasks share. */
    @FunctionalInterface
    public interface ModelFactory {
        CostModel create(long seed);
    }

    /** Makes the search policy of a task guided by a cost model shared with the other tasks. */
    @FunctionalInterface
    public interface SharedModelPolicyFactory {
        SearchPolicy create(SearchTask task, CostModel model, long seed);
    }

    public TaskSchedulerOptions {
        Objects.requireNonNull(strategy, "strategy");
        Objects.requireNonNull(objective, "objective");
        Objects.requireNonNull(policies, "policies");
        Objects.requireNonNull(sharedModel, "sharedModel");
        Objects.requireNonNull(sharedModelPolicies, "sharedModelPolicies");
        Objects.requireNonNull(measureOptions, "measureOptions");
        Objects.requireNonNull(measurers, "measurers");
        Objects.requireNonNull(timeBudget, "timeBudget");
        Objects.requireNonNull(overlapRounds, "overlapRounds");
        if (timeBudget.isNegative())
            throw new KilnException("task scheduler: the time budget must not be negative, got " + timeBudget);
        if (trials < 0) throw new KilnException("task scheduler: trials must not be negative, got " + trials);
        if (measuresPerRound < 1)
            throw new KilnException("task scheduler: measuresPerRound must be at least 1, got " + measuresPerRound);
        if (!(alpha >= 0 && alpha <= 1))
            throw new KilnException("task scheduler: alpha must be in [0, 1], got " + alpha);
        if (!(beta >= 1) || Double.isInfinite(beta))
            throw new KilnException("task scheduler: beta must be finite and at least 1, got " + beta);
        if (backwardWindow < 1)
            throw new KilnException("task scheduler: backwardWindow must be at least 1, got " + backwardWindow);
        if (perTaskEarlyStopping < 0)
            throw new KilnException("task scheduler: perTaskEarlyStopping must not be negative (0 turns it off), got "
                    + perTaskEarlyStopping);
        if (earlyStopping < 0)
            throw new KilnException(
                    "task scheduler: earlyStopping must not be negative (0 turns it off), got " + earlyStopping);
        if (transferPrograms < 0)
            throw new KilnException("task scheduler: transferPrograms must not be negative (0 turns transfer off), got "
                    + transferPrograms);
        if (!(taskEpsGreedy >= 0 && taskEpsGreedy <= 1))
            throw new KilnException("task scheduler: taskEpsGreedy must be in [0, 1], got " + taskEpsGreedy);
    }

    /** The programs a starting task gets from its similar tasks with {@link Builder#transfer}. */
    public static final int TRANSFER_PROGRAMS = 8;

    public static Builder builder() {
        return new Builder();
    }

    /** The defaults (see the class comment). */
    public static TaskSchedulerOptions defaults() {
        return builder().build();
    }

    /** Whether starting tasks get programs transferred from their similar tasks ({@code transferPrograms > 0}). */
    public boolean transfer() {
        return transferPrograms > 0;
    }

    /** The log file, if any. */
    public Optional<Path> log() {
        return Optional.ofNullable(logFile);
    }

    /** Builds {@link TaskSchedulerOptions}; every setter checks its value. */
    public static final class Builder {
        private Strategy strategy = Strategy.GRADIENT;
        private int trials = 1000;
        private int measuresPerRound = 64;
        private long seed;
        private double alpha = 0.2, beta = 2;
        private int backwardWindow = 3;
        private int perTaskEarlyStopping, earlyStopping;
        private double taskEpsGreedy;
        private Objective objective = Objective.weightedSum();
        private Path logFile, latencyTsv;
        private TuneOptions.PolicyFactory policies = EvolutionarySearchPolicy::forTask;
        private boolean sharedCostModel;
        private ModelFactory sharedModel = dev.kiln.autoschedule.model.GbdtCostModel::defaults;
        private SharedModelPolicyFactory sharedModelPolicies = EvolutionarySearchPolicy::forTask;
        private MeasureOptions measureOptions = MeasureOptions.defaults();
        private TuneOptions.MeasurerFactory measurers = MeasurerProviders::start;
        private Measurer measurer;
        private SchedulerListener listener;
        private boolean verbose;
        private RoundOverlap overlapRounds = RoundOverlap.WHEN_ASYNCHRONOUS;
        private java.time.Duration timeBudget = java.time.Duration.ZERO;
        private int transferPrograms;

        private Builder() {}

        public Builder strategy(Strategy s) {
            strategy = Objects.requireNonNull(s, "strategy");
            return this;
        }

        /** The trial budget over all tasks, counting trials already in the log. */
        public Builder trials(int n) {
            trials = n;
            return this;
        }

        public Builder measuresPerRound(int n) {
            measuresPerRound = n;
            return this;
        }

        public Builder seed(long s) {
            seed = s;
            return this;
        }

        public Builder alpha(double a) {
            alpha = a;
            return this;
        }

        public Builder beta(double b) {
            beta = b;
            return this;
        }

        public Builder backwardWindow(int w) {
            backwardWindow = w;
            return this;
        }

        /**
         * A task is dead once it has gone more than {@code n} trials (rounds x per-round) without a better program; 0:
         * never.
         */
        public Builder perTaskEarlyStopping(int n) {
            perTaskEarlyStopping = n;
            return this;
        }

        /** Stop when the objective has not improved in {@code n} trials; 0: never. */
        public Builder earlyStopping(int n) {
            earlyStopping = n;
            return this;
        }

        /** Probability of a uniformly random live task instead of the gradient's choice (0: off, Ansor's code). */
        public Builder taskEpsGreedy(double p) {
            taskEpsGreedy = p;
            return this;
        }

        public Builder objective(Objective o) {
            objective = Objects.requireNonNull(o, "objective");
            return this;
        }

        /** The tuning log shared by all tasks (created if missing, resumed from if not); null for none. */
        public Builder logFile(Path p) {
            logFile = p;
            return this;
        }

        /** Where to write the objective after every round as TSV; null for nowhere. */
        public Builder latencyTsv(Path p) {
            latencyTsv = p;
            return this;
        }

        /**
         * The policy of a task with its own cost model (default
         * {@link EvolutionarySearchPolicy#forTask(SearchTask, long)}).
         */
        public Builder policies(TuneOptions.PolicyFactory f) {
            policies = Objects.requireNonNull(f, "policies");
            return this;
        }

        /** Whether the tasks share one cost model (default false: one model per task). */
        public Builder sharedCostModel(boolean on) {
            sharedCostModel = on;
            return this;
        }

        /** Makes the shared cost model (default {@code GbdtCostModel::defaults}). */
        public Builder sharedModel(ModelFactory f) {
            sharedModel = Objects.requireNonNull(f, "sharedModel");
            return this;
        }

        /**
         * The policy of a task guided by the shared model (default
         * {@link EvolutionarySearchPolicy#forTask(SearchTask, CostModel, long)}).
         */
        public Builder sharedModelPolicies(SharedModelPolicyFactory f) {
            sharedModelPolicies = Objects.requireNonNull(f, "sharedModelPolicies");
            return this;
        }

        public Builder measureOptions(MeasureOptions o) {
            measureOptions = Objects.requireNonNull(o, "measureOptions");
            return this;
        }

        /** Makes the measurer of each target (for instance {@code LocalMeasurer::of}); closed at the end. */
        public Builder measurers(TuneOptions.MeasurerFactory f) {
            measurers = Objects.requireNonNull(f, "measurers");
            return this;
        }

        /** One measurer for all tasks, used as it is (not closed); null to make them with the factory. */
        public Builder measurer(Measurer m) {
            measurer = m;
            return this;
        }

        public Builder listener(SchedulerListener l) {
            listener = l;
            return this;
        }

        /** Print the progress table (Ansor's PrintTableInfo) to standard output after every round. */
        public Builder verbose(boolean on) {
            verbose = on;
            return this;
        }

        /** Stop starting rounds after this long (checked after the warm-up; ZERO: no limit). */
        public Builder timeBudget(java.time.Duration d) {
            timeBudget = Objects.requireNonNull(d, "timeBudget");
            return this;
        }

        /**
         * Overlap rounds always ({@code true}: hand out the next round, another task's, chosen from what is known now,
         * while the last one measures, and apply results oldest round first) or never ({@code false}). Without this
         * call, rounds overlap when every task's measurer is asynchronous ({@link RoundOverlap#WHEN_ASYNCHRONOUS}).
         */
        public Builder overlapRounds(boolean on) {
            overlapRounds = on ? RoundOverlap.ALWAYS : RoundOverlap.NEVER;
            return this;
        }

        /** When to overlap rounds (default {@link RoundOverlap#WHEN_ASYNCHRONOUS}). */
        public Builder overlapRounds(RoundOverlap when) {
            overlapRounds = Objects.requireNonNull(when, "overlapRounds");
            return this;
        }

        /**
         * Schedule transfer between similar tasks on ({@value #TRANSFER_PROGRAMS} programs per starting task) or off
         * (the default, until it is measured).
         */
        public Builder transfer(boolean on) {
            transferPrograms = on ? TRANSFER_PROGRAMS : 0;
            return this;
        }

        /** Schedule transfer with up to {@code n} programs per starting task (0: off). */
        public Builder transferPrograms(int n) {
            transferPrograms = n;
            return this;
        }

        public TaskSchedulerOptions build() {
            return new TaskSchedulerOptions(
                    strategy,
                    trials,
                    measuresPerRound,
                    seed,
                    alpha,
                    beta,
                    backwardWindow,
                    perTaskEarlyStopping,
                    earlyStopping,
                    taskEpsGreedy,
                    objective,
                    logFile,
                    latencyTsv,
                    policies,
                    sharedCostModel,
                    sharedModel,
                    sharedModelPolicies,
                    measureOptions,
                    measurers,
                    measurer,
                    listener,
                    verbose,
                    timeBudget,
                    overlapRounds,
                    transferPrograms);
        }
    }
}
