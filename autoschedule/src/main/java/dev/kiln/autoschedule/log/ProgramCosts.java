package dev.kiln.autoschedule.log;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The cost of each program in a set of log records (of one workload on one target). A program
 * (the same steps) may be measured more than once: its trial, then re-measurements
 * ({@link LogRecord#REMEASURE}) when it was among a search's fastest. Its cost is the median of
 * its valid measurements' costs ({@link #combine}), so one lucky measurement does not make it the
 * best; a program measured once costs what that measurement says. A program with a failed
 * measurement (a re-measure that crashed, timed out or gave a wrong result) is left out. The search
 * ({@code SearchLoop}) and the log's {@link LogLookup} use this one rule.
 */
public final class ProgramCosts {
    /**
     * One program: its first valid record (the one to replay) and the cost of each valid measurement.
     *
     * @param first  the program's first valid record
     * @param costs  {@link LogRecord#seconds()} of each of its valid records, in log order
     */
    public record Program(LogRecord first, List<Double> costs) {
        public Program {
            costs = List.copyOf(costs);
        }

        /** The program's cost: {@link #combine} of its measurements. */
        public double seconds() {
            return combine(costs);
        }

        /** How many valid measurements it has. */
        public int measurements() {
            return costs.size();
        }
    }

    private final Map<String, Program> programs;

    private ProgramCosts(Map<String, Program> programs) {
        this.programs = programs;
    }

    /**
     * The programs of {@code records} with a valid measurement and no failed one, in order of their first valid one.
     */
    public static ProgramCosts of(List<LogRecord> records) {
        Map<String, LogRecord> first = new LinkedHashMap<>();
        Map<String, List<Double>> costs = new LinkedHashMap<>();
        java.util.Set<String> failed = new java.util.HashSet<>();
        for (LogRecord r : records) {
            String key = r.steps().toString();
            if (!r.isValid()) {
                failed.add(key);
                continue;
            }
            first.putIfAbsent(key, r);
            costs.computeIfAbsent(key, k -> new ArrayList<>()).add(r.seconds());
        }
        Map<String, Program> out = new LinkedHashMap<>();
        first.forEach((k, r) -> {
            if (!failed.contains(k)) out.put(k, new Program(r, costs.get(k)));
        });
        return new ProgramCosts(out);
    }

    /** The programs, in order of their first valid record. */
    public List<Program> programs() {
        return List.copyOf(programs.values());
    }

    /** The cheapest program (ties go to the one logged first), if any. */
    public Optional<Program> best() {
        return programs.values().stream().min(Comparator.comparingDouble(Program::seconds));
    }

    /**
     * The cost of a program measured {@code costs.size()} times: the median of the measurements
     * (the mean of the middle two for an even count); {@link Double#POSITIVE_INFINITY} for none.
     */
    public static double combine(List<Double> costs) {
        if (costs.isEmpty()) return Double.POSITIVE_INFINITY;
        double[] s = costs.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }
}
