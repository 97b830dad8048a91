package dev.kiln.autoschedule.log;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What a tuning log holds for one workload on one target: the fastest program (by
 * {@link ProgramCosts}: a program measured more than once costs the median of its measurements;
 * ties go to the program logged first), how many records and valid records match, the errors among them by kind,
 * and the records of the same workload measured on other targets, which are never applied (a
 * program tuned for one machine says little about another). {@link #explanation()} says all of
 * this in a sentence for the user.
 *
 * @param source        how to name the log in messages ("the log /tmp/x.jsonl")
 * @param workloadKey   the workload looked up
 * @param target        the target looked up
 * @param best          the first valid record of the fastest program
 * @param bestSeconds   that program's cost ({@link ProgramCosts.Program#seconds()}); infinite when there is none
 * @param matching      records of this workload on this target
 * @param valid         valid ones among them
 * @param errors        the matching records that failed, counted by error kind
 * @param otherTargets  records of this workload on other targets, counted by target string
 */
public record LogLookup(
        String source,
        String workloadKey,
        String target,
        Optional<LogRecord> best,
        double bestSeconds,
        int matching,
        int valid,
        Map<String, Integer> errors,
        Map<String, Integer> otherTargets) {
    public LogLookup {
        errors = Map.copyOf(errors);
        otherTargets = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(otherTargets));
    }

    static LogLookup of(String source, List<LogRecord> records, String workloadKey, String target) {
        int matching = 0, valid = 0;
        Map<String, Integer> errors = new TreeMap<>();
        Map<String, Integer> others = new LinkedHashMap<>();
        List<LogRecord> mine = new ArrayList<>();
        for (LogRecord r : records) {
            if (!r.workloadKey().equals(workloadKey)) continue;
            if (!TuningLog.sameTarget(r.target(), target)) {
                others.merge(r.target(), 1, Integer::sum);
                continue;
            }
            matching++;
            mine.add(r);
            if (!r.isValid()) {
                errors.merge(r.errorKind(), 1, Integer::sum);
                continue;
            }
            valid++;
        }
        Optional<ProgramCosts.Program> best = ProgramCosts.of(mine).best();
        return new LogLookup(
                source,
                workloadKey,
                target,
                best.map(ProgramCosts.Program::first),
                best.map(ProgramCosts.Program::seconds).orElse(Double.POSITIVE_INFINITY),
                matching,
                valid,
                errors,
                others);
    }

    /** Whether records of this workload on other targets were left out. */
    public boolean hasOtherTargets() {
        return !otherTargets.isEmpty();
    }

    /**
     * A sentence on what was found: the best record, or why there is none (no record of the
     * workload, only failed ones, or only records of other targets, which are named), and any
     * records of other targets that were not applied.
     */
    public String explanation() {
        StringBuilder sb = new StringBuilder();
        if (best.isPresent()) {
            sb.append(source)
                    .append(" has ")
                    .append(valid)
                    .append(" valid record(s) of workload ")
                    .append(workloadKey)
                    .append(" on target '")
                    .append(target)
                    .append("'; the best takes ")
                    .append(String.format("%.3g", bestSeconds))
                    .append(" s.");
        } else if (matching > 0) {
            sb.append(source)
                    .append(" has ")
                    .append(matching)
                    .append(" record(s) of workload ")
                    .append(workloadKey)
                    .append(" on target '")
                    .append(target)
                    .append("', but none is valid (errors: ")
                    .append(errors)
                    .append(").");
        } else {
            sb.append(source)
                    .append(" has no record of workload ")
                    .append(workloadKey)
                    .append(" on target '")
                    .append(target)
                    .append("'.");
        }
        if (hasOtherTargets()) {
            sb.append(' ').append(otherTargetsNote());
        }
        return sb.toString();
    }

    /** The note on records of other targets ("" when there are none). */
    public String otherTargetsNote() {
        if (!hasOtherTargets()) return "";
        StringBuilder sb =
                new StringBuilder("Records of this workload for other targets are not applied, because a program "
                        + "tuned for one target is not known to be good (or even valid) on another: ");
        boolean first = true;
        for (var e : otherTargets.entrySet()) {
            if (!first) sb.append(", ");
            first = false;
            sb.append(e.getValue()).append(" for '").append(e.getKey()).append('\'');
        }
        return sb.append('.').toString();
    }
}
