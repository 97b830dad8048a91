package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.evolution.EvolutionarySearchPolicy;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.model.GbdtCostModel;
import dev.kiln.autoschedule.model.PretrainedModel;
import dev.kiln.autoschedule.scheduler.RoundOverlap;
import dev.kiln.autoschedule.scheduler.SchedulerListener;
import dev.kiln.autoschedule.scheduler.Strategy;
import dev.kiln.autoschedule.scheduler.TaskSchedulerOptions;
import dev.kiln.autoschedule.tune.TuneOptions;
import java.nio.file.Path;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * The options of {@link Network#tune}: the task scheduler's ({@link TaskSchedulerOptions}: trial
 * budget over all tasks, strategy, seed, log file, measurement, search policies) and the network
 * level's (layout rewrite of constant weights, on by default on CPUs). The builder has the common
 * settings; {@link Builder#scheduler} reaches every other one. Unlike an operator's tuning, a network's flushes
 * the caches before every timed run by default ({@link MeasureOptions#flushCache()}): inside the network a
 * kernel's weights come from memory, and the search should pick programs that are fast that way;
 * {@code scheduler(b -> b.measureOptions(MeasureOptions.defaults()))} times warm loops instead.
 *
 * <pre>{@code
 * NetworkTuneOptions.builder().trials(2000).logFile(log).build()
 * NetworkTuneOptions.builder().trials(500).scheduler(b ->
 * b.strategy(Strategy.ROUND_ROBIN).sharedCostModel(true)).build() }</pre>
 *
 * @param scheduler     the task scheduler's options
 * @param layoutRewrite whether CPU kernels read constant weights in a layout packed for their tiles: every program
 *                      is measured that way while tuning (its task's log key says {@code layout_free=[...]}) and
 *                      built that way; build such a log with {@link Network#build(Graph, Target, Path)}, one tuned
 *                      without it with {@code build(graph, target, log, false)}
 */
public record NetworkTuneOptions(TaskSchedulerOptions scheduler, boolean layoutRewrite) {
    public NetworkTuneOptions {
        Objects.requireNonNull(scheduler, "scheduler");
    }

    public static Builder builder() {
        return new Builder();
    }

    public static NetworkTuneOptions defaults() {
        return builder().build();
    }

    /** Builds {@link NetworkTuneOptions}. */
    public static final class Builder {
        private final TaskSchedulerOptions.Builder s = TaskSchedulerOptions.builder();
        private boolean layoutRewrite = true;

        private Builder() {
            s.transfer(true); // schedule transfer on for networks: ResNet-50, 300 s, 44.3 -> 36.4 ms (PERFORMANCE)
            // Programs timed on cold data, as a network's kernels run: every argument evicted from all caches
            // before each timed run (CacheFlusher). 2 threads, fresh logs: MobileNet-V2 10% faster in the network
            // (3 of 3 pairs), ResNet-50 and BERT as fast as warm tuning, and every network within 1.04-1.19x of
            // its estimate against 1.22-1.75x (PERFORMANCE, "Cold weights in the tuner's measurement").
            s.measureOptions(MeasureOptions.defaults().withFlushCache(true));
        }

        /** The trial budget over all tasks, counting trials already in the log (default 1000). */
        public Builder trials(int n) {
            s.trials(n);
            return this;
        }

        public Builder measuresPerRound(int n) {
            s.measuresPerRound(n);
            return this;
        }

        public Builder seed(long seed) {
            s.seed(seed);
            return this;
        }

        /** The tuning log shared by all tasks; a later run resumes from it and {@link Network#build} reads it. */
        public Builder logFile(Path p) {
            s.logFile(p);
            return this;
        }

        public Builder strategy(Strategy st) {
            s.strategy(st);
            return this;
        }

        public Builder policies(TuneOptions.PolicyFactory f) {
            s.policies(f);
            return this;
        }

        public Builder measurer(Measurer m) {
            s.measurer(m);
            return this;
        }

        public Builder measurers(TuneOptions.MeasurerFactory f) {
            s.measurers(f);
            return this;
        }

        public Builder listener(SchedulerListener l) {
            s.listener(l);
            return this;
        }

        /** Print the per-task progress table after every round. */
        public Builder verbose(boolean on) {
            s.verbose(on);
            return this;
        }

        /** Stop starting rounds after this long (the warm-up round of every task always completes). */
        public Builder timeBudget(java.time.Duration d) {
            s.timeBudget(d);
            return this;
        }

        /**
         * Start the next task's round while the last one measures, always ({@code true}) or never ({@code false})
         * ({@link TaskSchedulerOptions.Builder#overlapRounds}). Without this call rounds overlap when the measurer is
         * asynchronous (a cluster, where it removes the idle tail of each round) and not with the local measurer.
         */
        public Builder overlapRounds(boolean on) {
            s.overlapRounds(on);
            return this;
        }

        /** When to overlap rounds (default {@link RoundOverlap#WHEN_ASYNCHRONOUS}). */
        public Builder overlapRounds(RoundOverlap when) {
            s.overlapRounds(when);
            return this;
        }

        public Builder layoutRewrite(boolean on) {
            layoutRewrite = on;
            return this;
        }

        /**
         * Every task's cost model starts from {@code pretrained} ({@link GbdtCostModel#withPretrained}) instead of
         * the model shipped with Kiln (the default, {@link EvolutionarySearchPolicy#defaultModel}): the default
         * evolutionary search with the learned model, warm from the first round. Replaces {@link #policies}.
         */
        public Builder pretrained(PretrainedModel pretrained) {
            Objects.requireNonNull(pretrained, "pretrained");
            s.policies((task, seed) -> EvolutionarySearchPolicy.forTask(
                    task, GbdtCostModel.defaults(seed).withPretrained(pretrained), seed));
            return this;
        }

        /**
         * Every task's cost model is the learned model alone, not started from the shipped pretrained model
         * ({@link EvolutionarySearchPolicy#withoutPretraining}; Ansor's start). Replaces {@link #policies}.
         */
        public Builder withoutPretraining() {
            s.policies(EvolutionarySearchPolicy::withoutPretraining);
            return this;
        }

        /**
         * Schedule transfer between the network's similar tasks (same structural key, e.g. the conv2d + bias + relu
         * of different shapes): each starting task's first batch is led by the adapted fastest programs of those
         * measured before it. On by default for network tuning (a quiet A/B on ResNet-50 in docs/PERFORMANCE.md);
         * {@code transfer(false)} tunes every task from scratch, as Ansor does.
         */
        public Builder transfer(boolean on) {
            s.transfer(on);
            return this;
        }

        /** Any other scheduler option. */
        public Builder scheduler(UnaryOperator<TaskSchedulerOptions.Builder> f) {
            f.apply(s);
            return this;
        }

        public NetworkTuneOptions build() {
            return new NetworkTuneOptions(s.build(), layoutRewrite);
        }
    }
}
