package dev.kiln.autoschedule.transfer;

import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.ProgramCosts;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What schedule transfer did in a tuning log, counted from the {@code transfer_from} marks: transferred trials
 * (and how many of them were valid), the tasks (workload and target) that received some, and the tasks whose
 * best program (by {@link ProgramCosts}, the rule the search and the build use) is a transferred one.
 *
 * @param transferredTrials trial records adapted from a similar task
 * @param validTransferred  those that ran and gave the right numbers
 * @param tasksSeeded       tasks with at least one transferred trial
 * @param bestIsTransferred tasks whose best program is a transferred one
 * @param tasks             tasks with at least one trial in the log
 */
public record TransferReport(
        int transferredTrials, int validTransferred, int tasksSeeded, int bestIsTransferred, int tasks) {

    /** The counts of a log's records. */
    public static TransferReport of(List<LogRecord> records) {
        Map<String, List<LogRecord>> byTask = new LinkedHashMap<>();
        for (LogRecord r : records) {
            byTask.computeIfAbsent(r.workloadKey() + '\n' + r.target(), k -> new java.util.ArrayList<>())
                    .add(r);
        }
        int transferred = 0, valid = 0, seeded = 0, best = 0;
        for (List<LogRecord> rs : byTask.values()) {
            boolean any = false;
            for (LogRecord r : rs) {
                if (r.isRemeasure() || !r.isTransferred()) continue;
                transferred++;
                if (r.isValid()) valid++;
                any = true;
            }
            if (any) seeded++;
            var b = ProgramCosts.of(rs).best();
            if (b.isPresent() && b.get().first().isTransferred()) best++;
        }
        return new TransferReport(transferred, valid, seeded, best, byTask.size());
    }

    /** One line for a bench's output. */
    public String describe() {
        return String.format(
                Locale.ROOT,
                "transfer: %d transferred trial(s) (%d valid) in %d of %d task(s); the best program of %d task(s) is a "
                        + "transferred one",
                transferredTrials,
                validTransferred,
                tasksSeeded,
                tasks,
                bestIsTransferred);
    }
}
