package dev.kiln.autoschedule.measure;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kiln.ir.KilnException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

/**
 * A test hook for the crash and hang isolation of a measuring child JVM that runs programs it is sent (the cluster
 * worker's, {@link RemoteMeasurement.Executor}): a request marked with a {@link Kind} makes the child abort through
 * libc's {@code abort()} (SIGABRT) or sleep for ever before it compiles the program. The child honours the mark only
 * when it was started with {@code -D}{@value #PROPERTY}{@code =true}; any other child answers such a request with a
 * {@link MeasureError#RUNTIME} error, so a stray mark never takes a production worker down.
 */
public final class FaultInjection {
    private FaultInjection() {}

    /** The system property of a child JVM that honours fault marks. */
    public static final String PROPERTY = "kiln.measure.faultInjection";

    /** The child JVM flag that enables fault marks. */
    public static final String CHILD_FLAG = "-D" + PROPERTY + "=true";

    private static final String FIELD = "fault";

    /** What the child does with a marked request. */
    public enum Kind {
        /** Calls libc's abort(): the JVM dies of SIGABRT. */
        CRASH,
        /** Sleeps until it is killed (the per-program time-out). */
        HANG;

        /** {@code crash} or {@code hang}, any case. */
        public static Kind parse(String s) {
            try {
                return valueOf(s.strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new KilnException("fault injection: unknown fault '" + s + "' (crash or hang)");
            }
        }
    }

    /** {@code program} marked with {@code kind}. */
    public static RemoteMeasurement.Program mark(RemoteMeasurement.Program program, Kind kind) {
        ObjectNode request = (ObjectNode) WorkerProtocol.parse(program.request());
        request.put(FIELD, kind.name());
        return new RemoteMeasurement.Program(WorkerProtocol.write(request));
    }

    /**
     * In the child: does what a marked request asks (and never returns from a crash or hang); returns an error
     * message when the request is marked but this JVM does not honour marks, {@code null} for an unmarked request.
     */
    static String apply(JsonNode request) {
        JsonNode f = request.get(FIELD);
        if (f == null || f.isNull()) return null;
        if (!Boolean.getBoolean(PROPERTY)) {
            return "the request asks for fault injection, which this measuring JVM was not started for (" + CHILD_FLAG
                    + ")";
        }
        switch (Kind.parse(f.asText())) {
            case CRASH -> abort();
            case HANG -> {
                while (true) {
                    try {
                        Thread.sleep(60_000);
                    } catch (InterruptedException e) {
                        // keep hanging: only the parent's kill ends this JVM
                    }
                }
            }
        }
        return null;
    }

    private static void abort() {
        Linker linker = Linker.nativeLinker();
        MethodHandle abort = linker.downcallHandle(
                linker.defaultLookup()
                        .find("abort")
                        .orElseThrow(() -> new KilnException("fault injection: libc has no abort()")),
                FunctionDescriptor.ofVoid());
        try {
            abort.invokeExact();
        } catch (Throwable t) {
            throw new KilnException("fault injection: abort() failed: " + t);
        }
    }
}
