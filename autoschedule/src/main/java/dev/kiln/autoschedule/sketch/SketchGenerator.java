package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.RfactorStep;
import dev.kiln.schedule.ScheduleException;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Sketch generation (Ansor's GenerateSketches): starting from the initial state at the last
 * stage, every state of the current wavefront tries the rules in order on its working stage.
 * A rule that applies adds its derived states to the next wavefront; with
 * {@link SketchRule.Condition#APPLY} the following rules are still tried on the same state (that
 * is how sketches branch), with {@code APPLY_AND_SKIP_REST} they are not. A state whose working
 * index drops below 0 is a finished sketch. Afterwards the split before every rfactor step is
 * made undecided so that its factor is sampled. The rule lists of each kind of target are
 * {@code dev.kiln.autoschedule.search.TargetRules}'.
 */
public final class SketchGenerator {
    /** A guard against rules that never move on (each round works on one stage of every state). */
    private static final int MAX_ROUNDS = 10_000;

    private final List<SketchRule> rules;

    /** A generator with these rules, tried in this order. */
    public SketchGenerator(List<SketchRule> rules) {
        if (rules.isEmpty()) throw new KilnException("sketch generation needs at least one rule");
        this.rules = List.copyOf(rules);
    }

    /** This generator with {@code custom} rules tried before its own (Ansor's custom sketch rules). */
    public SketchGenerator withCustomRules(List<SketchRule> custom) {
        List<SketchRule> all = new ArrayList<>(custom);
        all.addAll(rules);
        return new SketchGenerator(all);
    }

    public List<SketchRule> rules() {
        return rules;
    }

    /** The sketches of a task, in the order they are finished. */
    public List<Sketch> generate(SearchTask task) {
        LoopState init = LoopState.initial(task.dag());
        List<SketchRule.Derivation> now =
                List.of(new SketchRule.Derivation(init, init.stages().size() - 1));
        List<LoopState> done = new ArrayList<>();
        for (int round = 0; !now.isEmpty(); round++) {
            if (round > MAX_ROUNDS) {
                throw new KilnException("sketch generation did not finish after " + MAX_ROUNDS
                        + " rounds; a rule keeps deriving states without moving to an earlier stage");
            }
            List<SketchRule.Derivation> next = new ArrayList<>();
            for (SketchRule.Derivation d : now) {
                if (d.nextStageId() < 0) {
                    done.add(d.state());
                    continue;
                }
                AccessAnalyzer access = AccessAnalyzer.of(d.state());
                for (SketchRule rule : rules) {
                    SketchRule.Condition c = rule.condition(task, access, d.state(), d.nextStageId());
                    if (c == SketchRule.Condition.SKIP) continue;
                    try {
                        next.addAll(rule.apply(task, access, d.state(), d.nextStageId()));
                    } catch (ScheduleException e) {
                        throw new KilnException("sketch rule " + rule.name() + " failed on stage '"
                                + d.state().stage(d.nextStageId()).name() + "': " + e.getMessage());
                    }
                    if (c == SketchRule.Condition.APPLY_AND_SKIP_REST) break;
                }
            }
            now = next;
        }
        List<Sketch> out = new ArrayList<>();
        for (LoopState s : done) out.add(new Sketch(undecideRfactorSplits(s.steps()), s));
        return List.copyOf(out);
    }

    /** The steps with the split just before each rfactor step given one undecided length. */
    static List<Step> undecideRfactorSplits(List<Step> steps) {
        List<Step> out = new ArrayList<>(steps);
        for (int i = 0; i < steps.size(); i++) {
            if (!(steps.get(i) instanceof RfactorStep)) continue;
            if (i == 0 || !(steps.get(i - 1) instanceof SplitStep sp)) {
                throw new KilnException("rfactor step " + i + " does not follow the split of its reduction");
            }
            out.set(i - 1, sp.withLengths(Arrays.asList((Integer) null)));
        }
        return out;
    }
}
