package dev.kiln.schedule;

import dev.kiln.ir.KilnException;

/** A schedule step that cannot apply; the message names the step, its stage and loop, and the reason. */
public class ScheduleException extends KilnException {
    public ScheduleException(String message) {
        super(message);
    }
}
