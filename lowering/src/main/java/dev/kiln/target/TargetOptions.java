package dev.kiln.target;

import dev.kiln.ir.KilnException;
import java.util.Map;

/** Reads the {@code -key=value} options of a target string, naming the target and key on error. */
final class TargetOptions {
    private final String target;
    private final Map<String, String> opts;

    TargetOptions(String target, Map<String, String> opts) {
        this.target = target;
        this.opts = opts;
    }

    String string(String key) {
        String v = opts.remove(key);
        if (v == null) throw new KilnException("target '" + target + "' lacks -" + key + "=...");
        return v;
    }

    String string(String key, String dflt) {
        String v = opts.remove(key);
        return v == null ? dflt : v;
    }

    int integer(String key) {
        String v = string(key);
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new KilnException("target '" + target + "': -" + key + "=" + v + " is not an integer");
        }
    }

    int integer(String key, int dflt) {
        return opts.containsKey(key) ? integer(key) : dflt;
    }

    /** Throws if an option was not read. */
    void requireAllUsed() {
        if (!opts.isEmpty()) throw new KilnException("target '" + target + "': unknown option(s) " + opts.keySet());
    }
}
