package dev.kiln.schedule;

/**
 * {@code PR}: a pragma on a loop. Kiln understands {@code auto_unroll_max_step$N}: the unroll
 * pass unrolls every loop nest of the stage whose total trip count is at most N.
 */
public record PragmaStep(int stageId, int iterId, String pragma) implements Step {
    public static final String AUTO_UNROLL = "auto_unroll_max_step";

    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        StepChecks.loop(st, iterId);
        String prefix = AUTO_UNROLL + "$";
        if (!pragma.startsWith(prefix)) {
            throw new ScheduleException("unknown pragma '" + pragma + "'; Kiln understands " + prefix + "<steps>");
        }
        int steps;
        try {
            steps = Integer.parseInt(pragma.substring(prefix.length()));
        } catch (NumberFormatException e) {
            throw new ScheduleException("pragma '" + pragma + "' needs an integer number of steps");
        }
        if (steps < 0) throw new ScheduleException("pragma '" + pragma + "': the number of steps cannot be negative");
        return s.withStage(stageId, st.withAutoUnroll(steps));
    }

    @Override
    public String describe(LoopState s) {
        return "pragma(" + StepChecks.loopName(s, stageId, iterId) + ", \"" + pragma + "\")";
    }
}
