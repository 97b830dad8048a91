package dev.kiln.autoschedule.measure;

/**
 * Why a measurement gave no time. Every failure of a candidate is one of these, recorded in its
 * {@link MeasureResult} with a message; none of them stops a batch or the tuning run.
 */
public enum MeasureError {
    /** Measured: the result has times. */
    NONE(0),
    /** The schedule did not replay or lower (an illegal step, a failed pass). */
    LOWER(1),
    /** The backend refused or failed to compile the lowered program. */
    COMPILE(2),
    /** The kernel threw while running (an argument check, an error raised by the backend). */
    RUNTIME(4),
    /** The output differs from the interpreter's reference beyond the tolerances. */
    WRONG_RESULT(5),
    /** Compiling and running took longer than the time-out; the worker was killed. */
    TIMEOUT(7),
    /** The worker process died (a segfault in native code, an exit, out of memory). */
    CRASH(8);

    private final int ansorCode;

    MeasureError(int ansorCode) {
        this.ansorCode = ansorCode;
    }

    /**
     * The nearest of Ansor's {@code MeasureErrorNo} (0 no error, 1 instantiation, 2 compile host,
     * 4 runtime device, 5 wrong answer, 7 run timeout, 8 unknown), for logs read by Ansor's tools.
     */
    public int ansorCode() {
        return ansorCode;
    }
}
