package dev.kiln.te;

import dev.kiln.ir.KilnException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The names a {@code compute} gives its spatial axes, outermost first, as TVM's {@code te.compute}
 * takes them from the lambda's parameter names: {@code compute("C", shape(M, N), names("row", "col"),
 * (row, col) -> ...)}. The names appear in printed programs, in the loops a schedule names
 * ({@code C.split("row", 8)}) and in error messages. Every name must be a non-empty identifier
 * (letters, digits and {@code _}, not starting with a digit; schedules add {@code .0}, {@code .1}
 * and {@code @} to loop names, so those characters are refused), and no two may be equal.
 */
public record AxisNames(List<String> names) {
    public AxisNames {
        if (names == null) throw new KilnException("axis names: the list of names is null");
        for (int d = 0; d < names.size(); d++) {
            if (names.get(d) == null)
                throw new KilnException("axis names " + names + ": the name of axis " + d + " is null");
        }
        names = List.copyOf(names);
        Map<String, Integer> seen = new HashMap<>();
        for (int d = 0; d < names.size(); d++) {
            String n = names.get(d);
            requireIdentifier("axis " + d, n);
            Integer before = seen.put(n, d);
            if (before != null) {
                throw new KilnException(
                        "axis names " + names + ": axes " + before + " and " + d + " are both named '" + n + "'");
            }
        }
    }

    public static AxisNames of(String... names) {
        if (names == null) throw new KilnException("axis names: the array of names is null");
        return new AxisNames(java.util.Arrays.asList(names));
    }

    public int size() {
        return names.size();
    }

    public String get(int d) {
        return names.get(d);
    }

    /** Throws unless {@code name} is a plain identifier; {@code what} says whose name it is. */
    static void requireIdentifier(String what, String name) {
        if (name == null) throw new KilnException(what + ": the name is null");
        if (name.isEmpty()) throw new KilnException(what + ": the name is empty");
        for (int c = 0; c < name.length(); c++) {
            char ch = name.charAt(c);
            boolean ok = ch == '_' || Character.isLetter(ch) || (c > 0 && Character.isDigit(ch));
            if (!ok) {
                throw new KilnException(what + ": name '" + name + "' is not an identifier (letters, digits and _, "
                        + "not starting with a digit)");
            }
        }
    }

    @Override
    public String toString() {
        return names.toString();
    }
}
