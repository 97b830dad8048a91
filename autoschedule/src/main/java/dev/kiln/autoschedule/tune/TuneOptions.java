package dev.kiln.autoschedule.tune;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.evolution.EvolutionarySearchPolicy;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.measure.MeasurerProviders;
import dev.kiln.autoschedule.search.SearchLimits;
import dev.kiln.autoschedule.search.SearchPolicy;
import dev.kiln.ir.KilnException;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The options of {@link AutoSchedule#tune}: how many programs to measure and how many at a time,
 * the seed, the log file that keeps every measurement (and from which a run resumes), the time
 * budget, early stopping, how programs are measured, and what is shown while tuning. Build with
 * {@link #builder()}; {@link #defaults()} is 200 trials, 64 per round, seed 0, no log file, no
 * time budget, no early stopping, {@link MeasureOptions#defaults()}, measurement in a child JVM,
 * evolutionary search guided by the learned cost model (on CPUs and GPUs alike), the
 * progress bar on (when there is a terminal), verbose off and no layout-free argument.
 *
 * @param trials            the trial budget of the task, counting trials already in the log
 * @param measuresPerRound  programs measured per round
 * @param seed              the seed of the search; the same seed and log give the same search
 * @param logFile           the tuning log, or null to keep measurements only in memory
 * @param timeBudget        the longest the search may run ({@link Duration#ZERO}: no limit)
 * @param earlyStopping     stop after this many trials without a better program (0: never)
 * @param measureOptions    how each program is timed and checked
 * @param measurers         makes the measurer of a run (default: {@code MeasurerProviders::start}, the
 *                          measurer a provider on the class path offers for the target, such as the
 *                          CUDA module's GPU measurer, else {@code ProcessMeasurer::start}, a child
 *                          JVM; {@code LocalMeasurer::of} measures in this process); ignored when
 *                          {@code measurer} is set
 * @param measurer          a measurer to use instead of making one (the run does not close it)
 * @param policies          makes the search policy of a task from the seed (default:
 *                          {@code EvolutionarySearchPolicy::forTask}, evolution guided by the
 *                          learned cost model over the target's sketches, with the GPU mutation
 *                          weights and device-limit checks on a GPU; {@code RandomSearchPolicy::forTask}
 *                          samples at random)
 * @param progressBar       whether to draw a progress bar on the terminal
 * @param verbose           whether to log a line per round (System.Logger, INFO)
 * @param layoutFree        names of input placeholders that are constants (weights) whose layout the program may
 *                          choose (Ansor's layout-free placeholders): every program is measured with them packed in
 *                          the order of its tiles, the task is logged under its own key ({@code ... layout_free=[1]}),
 *                          and the kernel packs them once ({@link LayoutFreeKernel#pack}); empty for none
 */
public record TuneOptions(
        int trials,
        int measuresPerRound,
        long seed,
        Path logFile,
        Duration timeBudget,
        int earlyStopping,
        MeasureOptions measureOptions,
        MeasurerFactory measurers,
        Measurer measurer,
        PolicyFactory policies,
        boolean progressBar,
        boolean verbose,
        List<String> layoutFree) {

    /** Makes the measurer of a tuning run; the run closes it at the end. */
    @FunctionalInterface
    public interface MeasurerFactory {
        Measurer create(Target target, MeasureOptions options);
    }

    /** Makes the search policy of a task. */
    @FunctionalInterface
    public interface PolicyFactory {
        SearchPolicy create(SearchTask task, long seed);
    }

    public TuneOptions {
        Objects.requireNonNull(timeBudget, "timeBudget");
        Objects.requireNonNull(measureOptions, "measureOptions");
        Objects.requireNonNull(measurers, "measurers");
        Objects.requireNonNull(policies, "policies");
        layoutFree = List.copyOf(layoutFree);
        new SearchLimits(trials, measuresPerRound, timeBudget, earlyStopping);
    }

    /** The defaults (see the class comment). */
    public static TuneOptions defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from these options. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.trials = trials;
        b.measuresPerRound = measuresPerRound;
        b.seed = seed;
        b.logFile = logFile;
        b.timeBudget = timeBudget;
        b.earlyStopping = earlyStopping;
        b.measureOptions = measureOptions;
        b.measurers = measurers;
        b.measurer = measurer;
        b.policies = policies;
        b.progressBar = progressBar;
        b.verbose = verbose;
        b.layoutFree = layoutFree;
        return b;
    }

    /** The tuning log file, if any. */
    public Optional<Path> log() {
        return Optional.ofNullable(logFile);
    }

    /** The limits of the search loop. */
    public SearchLimits limits() {
        return new SearchLimits(trials, measuresPerRound, timeBudget, earlyStopping);
    }

    /** Builds {@link TuneOptions}; every setter checks its value. */
    public static final class Builder {
        private int trials = 200;
        private int measuresPerRound = 64;
        private long seed;
        private Path logFile;
        private Duration timeBudget = Duration.ZERO;
        private int earlyStopping;
        private MeasureOptions measureOptions = MeasureOptions.defaults();
        private MeasurerFactory measurers = MeasurerProviders::start;
        private Measurer measurer;
        // Evolution guided by the learned cost model, as Ansor searches on both kinds of target.
        private PolicyFactory policies = EvolutionarySearchPolicy::forTask;
        private boolean progressBar = true;
        private boolean verbose;
        private List<String> layoutFree = List.of();

        private Builder() {}

        /** The trial budget of the task, counting the trials already in the log. */
        public Builder trials(int n) {
            if (n < 0) throw new KilnException("tune options: trials must not be negative, got " + n);
            trials = n;
            return this;
        }

        /** Programs measured per round. */
        public Builder measuresPerRound(int n) {
            if (n < 1) throw new KilnException("tune options: measuresPerRound must be at least 1, got " + n);
            measuresPerRound = n;
            return this;
        }

        public Builder seed(long s) {
            seed = s;
            return this;
        }

        /** The tuning log (created if missing, resumed from if not); null for none. */
        public Builder logFile(Path file) {
            logFile = file;
            return this;
        }

        /** The longest the search may run; {@link Duration#ZERO} for no limit. */
        public Builder timeBudget(Duration d) {
            Objects.requireNonNull(d, "timeBudget");
            if (d.isNegative()) throw new KilnException("tune options: the time budget must not be negative, got " + d);
            timeBudget = d;
            return this;
        }

        /** Stop after {@code n} trials without a better program; 0 never stops early. */
        public Builder earlyStopping(int n) {
            if (n < 0)
                throw new KilnException("tune options: earlyStopping must not be negative (0 turns it off), got " + n);
            earlyStopping = n;
            return this;
        }

        public Builder measureOptions(MeasureOptions o) {
            measureOptions = Objects.requireNonNull(o, "measureOptions");
            return this;
        }

        /** How to make the measurer of a run (for instance {@code LocalMeasurer::of}, in this process). */
        public Builder measurers(MeasurerFactory f) {
            measurers = Objects.requireNonNull(f, "measurers");
            return this;
        }

        /** A measurer to use as it is (not closed by the run); null to make one with the factory. */
        public Builder measurer(Measurer m) {
            measurer = m;
            return this;
        }

        /**
         * How to make the search policy (default: {@link EvolutionarySearchPolicy#forTask}, evolution guided by the
         * learned cost model; {@code RandomSearchPolicy::forTask} samples at random).
         */
        public Builder policy(PolicyFactory f) {
            policies = Objects.requireNonNull(f, "policy");
            return this;
        }

        /** Whether to draw the progress bar (only ever drawn on a terminal). */
        public Builder progressBar(boolean on) {
            progressBar = on;
            return this;
        }

        /** Whether to log a line per round. */
        public Builder verbose(boolean on) {
            verbose = on;
            return this;
        }

        /**
         * The input placeholders, by name, that are constants whose layout the program may choose (see the record
         * comment); none by default. Names not among the computation's inputs are refused by {@link AutoSchedule#tune}.
         */
        public Builder layoutFree(String... names) {
            Objects.requireNonNull(names, "layoutFree");
            List<String> l = new ArrayList<>();
            for (String n : names) {
                if (n == null || n.isBlank()) throw new KilnException("tune options: a layout-free name is empty");
                if (!l.contains(n)) l.add(n);
            }
            layoutFree = List.copyOf(l);
            return this;
        }

        public TuneOptions build() {
            return new TuneOptions(
                    trials,
                    measuresPerRound,
                    seed,
                    logFile,
                    timeBudget,
                    earlyStopping,
                    measureOptions,
                    measurers,
                    measurer,
                    policies,
                    progressBar,
                    verbose,
                    layoutFree);
        }
    }
}
