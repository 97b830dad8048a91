package dev.kiln.schedule;

import dev.kiln.ir.KilnException;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The light loop structure a schedule's steps act on: one {@link Stage} per operation (stages
 * are in a producer-before-consumer order), plus the steps applied so far. It is immutable;
 * {@link #apply} returns a new state. Replaying the same steps on a fresh DAG gives an equal
 * structure.
 */
public record LoopState(ComputeDAG dag, List<Stage> stages, List<Step> steps) {
    public LoopState {
        stages = List.copyOf(stages);
        steps = List.copyOf(steps);
    }

    /** The state of a DAG before any step: every operation at root with one loop per axis. */
    public static LoopState initial(ComputeDAG dag) {
        Set<Operation> outs = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        for (Tensor t : dag.outputs()) outs.add(t.op());
        List<Stage> stages = new ArrayList<>();
        for (Operation op : dag.ops()) stages.add(Stage.initial(op, outs.contains(op)));
        return new LoopState(dag, stages, List.of());
    }

    /** Applies a step, or throws a {@link ScheduleException} naming the step and why it cannot apply. */
    public LoopState apply(Step step) {
        if (step == null) throw new ScheduleException("step " + steps.size() + " is null");
        LoopState next;
        try {
            next = step.applyTo(this);
            next.checkAttachments();
            for (int i = 0; i < next.stages.size(); i++) {
                if (!TensorizeStep.unchangedFor(this, next, i)) TensorizeStep.recheck(next, i, false);
            }
        } catch (KilnException | NullPointerException | IndexOutOfBoundsException | ArithmeticException e) {
            // the last three are a step record with a missing or out-of-range field (a hand-written
            // or corrupted one); name the step rather than let a raw exception out
            String what;
            try {
                what = step.describe(this);
            } catch (RuntimeException d) {
                what = step.toString();
            }
            String why = e instanceof KilnException ? e.getMessage() : "malformed step (" + e + ")";
            throw new ScheduleException("step " + steps.size() + " " + what + ": " + why);
        }
        List<Step> history = new ArrayList<>(steps);
        history.add(step);
        return new LoopState(dag, next.stages, history);
    }

    /**
     * Every stage computed inside a loop must still have all its consumers inside that loop (a
     * cache_read or cache_write can give it a new consumer elsewhere).
     */
    void checkAttachments() {
        for (int i = 0; i < stages.size(); i++) {
            Stage st = stages.get(i);
            if (st.computeAt() != ComputeAtKind.ITER) continue;
            Stage target = stages.get(st.attachStage());
            int pos = target.indexOfUid(st.attachIter());
            if (pos < 0 || target.computeAt() == ComputeAtKind.INLINED) {
                throw new ScheduleException("'" + st.name() + "' is computed inside a loop of '" + target.name()
                        + "' that no longer exists");
            }
            for (int c : consumers(i)) {
                if (!ComputeAtStep.encloses(this, st.attachStage(), st.attachIter(), c)) {
                    throw new ScheduleException("'" + st.name() + "' is computed inside loop '"
                            + target.iter(pos).name()
                            + "' of '" + target.name() + "', which does not enclose its consumer '"
                            + stages.get(c).name()
                            + "'; compute it at root first");
                }
            }
        }
    }

    public Stage stage(int id) {
        if (id < 0 || id >= stages.size()) {
            throw new ScheduleException("there is no stage " + id + " (the state has " + stages.size() + " stages)");
        }
        return stages.get(id);
    }

    /** The index of the stage whose operation is called {@code name}. */
    public int stageIndex(String name) {
        int found = -1;
        for (int i = 0; i < stages.size(); i++) {
            if (stages.get(i).name().equals(name)) {
                if (found >= 0) throw new ScheduleException("two stages are named '" + name + "'; use the stage index");
                found = i;
            }
        }
        if (found < 0) {
            throw new ScheduleException("no stage is named '" + name + "'; the stages are "
                    + stages.stream().map(Stage::name).toList());
        }
        return found;
    }

    /** The index of the stage that computes {@code t}. */
    public int stageIndex(Tensor t) {
        for (int i = 0; i < stages.size(); i++) if (stages.get(i).op() == t.op()) return i;
        return stageIndex(t.name());
    }

    /** Whether every tile size has been decided. */
    public boolean isConcrete() {
        return stages.stream().allMatch(Stage::isConcrete);
    }

    /** The stages that read stage {@code id}'s outputs directly. */
    public List<Integer> directConsumers(int id) {
        Set<Tensor> outs = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        outs.addAll(stages.get(id).op().outputs());
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < stages.size(); i++) {
            for (Tensor in : stages.get(i).op().inputTensors()) {
                if (outs.contains(in)) {
                    out.add(i);
                    break;
                }
            }
        }
        return out;
    }

    /** The consumers of stage {@code id}, looking through inlined stages. */
    public List<Integer> consumers(int id) {
        Set<Integer> out = new java.util.LinkedHashSet<>();
        for (int c : directConsumers(id)) {
            if (stages.get(c).computeAt() == ComputeAtKind.INLINED) out.addAll(consumers(c));
            else out.add(c);
        }
        return List.copyOf(out);
    }

    /** The stages that {@code id} reads directly. */
    public List<Integer> directProducers(int id) {
        List<Integer> out = new ArrayList<>();
        for (Tensor in : stages.get(id).op().inputTensors()) {
            for (int i = 0; i < stages.size(); i++) {
                if (stages.get(i).op() == in.op() && !out.contains(i)) out.add(i);
            }
        }
        return out;
    }

    /** Stages computed inside a loop of stage {@code id}. */
    public List<Integer> attachedTo(int id) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < stages.size(); i++) {
            Stage s = stages.get(i);
            if (s.computeAt() == ComputeAtKind.ITER && s.attachStage() == id) out.add(i);
        }
        return out;
    }

    LoopState withStage(int id, Stage s) {
        List<Stage> st = new ArrayList<>(stages);
        st.set(id, s);
        return new LoopState(dag, st, steps);
    }

    /** Inserts a stage at {@code at}, shifting every later stage and every compute_at reference to it. */
    LoopState insertStage(int at, Stage s) {
        List<Stage> st = new ArrayList<>();
        for (Stage old : stages) {
            if (old.computeAt() == ComputeAtKind.ITER && old.attachStage() >= at) {
                old = old.withComputeAt(ComputeAtKind.ITER, old.attachStage() + 1, old.attachIter());
            }
            st.add(old);
        }
        st.add(at, s);
        return new LoopState(dag, st, steps);
    }

    /**
     * Rebuilds, from stage {@code from} on, every operation that reads a replaced tensor so that
     * it reads the replacement (cascading to its own readers), keeping the stages' loops.
     */
    LoopState replaceReads(Map<Tensor, Tensor> replaced, int from, Set<Integer> skip) {
        Map<Tensor, Tensor> repl = new IdentityHashMap<>(replaced);
        List<Stage> st = new ArrayList<>(stages);
        for (int i = from; i < st.size(); i++) {
            if (skip.contains(i) || !(st.get(i).op() instanceof ComputeOp c)) continue;
            if (c.inputTensors().stream().noneMatch(repl::containsKey)) continue;
            ComputeOp rebuilt = rebuild(c, repl);
            for (int v = 0; v < c.outputs().size(); v++) repl.put(c.output(v), rebuilt.output(v));
            st.set(i, st.get(i).withOp(rebuilt));
        }
        return new LoopState(dag, st, steps);
    }

    /** The same computation reading the replacement tensors. */
    static ComputeOp rebuild(ComputeOp c, Map<Tensor, Tensor> repl) {
        ComputeOp r = c.readingReplaced(repl);
        // a new op even when nothing is replaced, as before: callers put it in the state as a stage of its own
        return r != c ? r : ComputeOp.create(c.name(), c.tag(), c.axes(), c.bodies());
    }

    /** Stage names, for messages. */
    Set<String> names() {
        Set<String> n = new HashSet<>();
        for (Stage s : stages) n.add(s.name());
        return n;
    }

    @Override
    public String toString() {
        return StatePrinter.print(this);
    }
}
