package dev.kiln.autoschedule.measure;

import dev.kiln.ir.KilnException;

/**
 * How many threads the measuring child compiles a batch's programs on before it times any of them
 * (as Ansor's {@code LocalBuilder(n_parallel)}): the system property {@value #PROPERTY}, by default
 * the cores this JVM may use. 1 is the serial path (each program compiled, then timed, one after
 * the other, as before issue 12).
 */
public final class BuildThreads {
    /** The system property that sets the thread count. */
    public static final String PROPERTY = "kiln.measure.buildThreads";

    private BuildThreads() {}

    /** The thread count {@value #PROPERTY} asks for, else the cores available. */
    public static int fromProperty() {
        return parse(System.getProperty(PROPERTY), Runtime.getRuntime().availableProcessors());
    }

    /** {@code value} as a thread count (null or blank: {@code cores}); anything but a positive integer throws. */
    static int parse(String value, int cores) {
        if (value == null || value.isBlank()) return Math.max(1, cores);
        int n;
        try {
            n = Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            throw new KilnException("-D" + PROPERTY + " must be a positive integer, got '" + value + "'");
        }
        return check(n);
    }

    /** {@code n} if it is a valid thread count, else a {@link KilnException} naming the setting. */
    static int check(int n) {
        if (n < 1) throw new KilnException("build threads (" + PROPERTY + ") must be at least 1, got " + n);
        return n;
    }
}
