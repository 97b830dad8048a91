package dev.kiln.schedule;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kiln.te.ComputeDAG;
import java.util.ArrayList;
import java.util.List;

/**
 * A schedule: an immutable list of {@link Step}s over a {@link ComputeDAG}. It is data: it
 * replays onto the DAG's {@link LoopState}, serialises to one JSON line and back, prints as Java
 * source that rebuilds it, and lowers to the loop IR ({@code Lowering.lower(name, schedule)}, in
 * {@code dev.kiln.lower}, which depends on this package and not the other way round). People build one with
 * {@link ScheduleBuilder}; the auto-scheduler builds and mutates the step list directly.
 */
public record Schedule(ComputeDAG dag, List<Step> steps) {
    /** The version written into every JSON form. */
    public static final String FORMAT = "kiln-schedule-1";

    private static final ObjectMapper JSON = new ObjectMapper();

    public Schedule {
        if (dag == null) throw new ScheduleException("a schedule needs a DAG; it is null");
        if (steps == null) throw new ScheduleException("a schedule needs a step list; it is null");
        for (int k = 0; k < steps.size(); k++) {
            if (steps.get(k) == null) throw new ScheduleException("step " + k + " of " + steps.size() + " is null");
        }
        steps = List.copyOf(steps);
    }

    /** The schedule with no steps: the default lowering. */
    public static Schedule empty(ComputeDAG dag) {
        return new Schedule(dag, List.of());
    }

    /** Applies every step to the DAG's initial state; an illegal step throws before anything runs. */
    public LoopState replay() {
        LoopState s = LoopState.initial(dag);
        for (Step step : steps) s = s.apply(step);
        return s;
    }

    /** This schedule with one more step (checked by replaying). */
    public Schedule append(Step step) {
        List<Step> more = new ArrayList<>(steps);
        more.add(step);
        Schedule out = new Schedule(dag, more);
        out.replay();
        return out;
    }

    /** One JSON line: {@code {"format":"kiln-schedule-1","workload_key":"kiln-...","steps":[["SP",...],...]}}. */
    public String toJson() {
        ObjectNode o = JSON.createObjectNode();
        o.put("format", FORMAT);
        o.put("workload_key", dag.workloadKey());
        o.set("steps", stepsJson());
        try {
            return JSON.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The steps as a JSON array (what the tuning log stores). */
    public ArrayNode stepsJson() {
        ArrayNode a = JSON.createArrayNode();
        for (Step s : steps) a.add(StepJson.write(s));
        return a;
    }

    /**
     * Reads a schedule written by {@link #toJson()} for {@code dag}; a schedule made for another
     * workload is refused, naming both keys. The steps are replayed on the DAG at once, so a stage
     * or loop index out of range (or any step that cannot apply) throws here, naming the step,
     * rather than when the schedule is lowered.
     */
    public static Schedule fromJson(String json, ComputeDAG dag) {
        if (json == null) throw new ScheduleException("fromJson: the JSON text is null");
        if (dag == null) throw new ScheduleException("fromJson: the DAG is null");
        JsonNode o;
        try {
            o = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new ScheduleException("not a schedule: " + e.getOriginalMessage());
        }
        if (o == null || !o.isObject() || !FORMAT.equals(o.path("format").asText())) {
            throw new ScheduleException("not a " + FORMAT + " schedule: " + json);
        }
        String key = o.path("workload_key").asText();
        if (!key.isEmpty() && !key.equals(dag.workloadKey())) {
            throw new ScheduleException(
                    "the schedule was made for workload " + key + ", not for this DAG (" + dag.workloadKey() + ")");
        }
        Schedule schedule = fromSteps(o.get("steps"), dag);
        schedule.replay();
        return schedule;
    }

    /**
     * Reads a step array (as in the tuning log) for {@code dag}, checking each record's form but not
     * replaying it (the log replays a record when it applies it); {@link #fromJson} replays.
     */
    public static Schedule fromSteps(JsonNode stepArray, ComputeDAG dag) {
        if (dag == null) throw new ScheduleException("fromSteps: the DAG is null");
        if (stepArray == null || !stepArray.isArray()) throw new ScheduleException("a schedule needs a 'steps' array");
        List<Step> steps = new ArrayList<>();
        for (JsonNode s : stepArray) {
            try {
                steps.add(StepJson.read(s));
            } catch (ScheduleException e) {
                throw new ScheduleException("step " + steps.size() + ": " + e.getMessage());
            }
        }
        return new Schedule(dag, steps);
    }

    /** Java source that rebuilds this schedule with {@link ScheduleBuilder}, given a variable {@code dag}. */
    public String toJavaSource() {
        return JavaSourcePrinter.print(this);
    }

    @Override
    public String toString() {
        return toJson();
    }
}
