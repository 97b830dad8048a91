package dev.kiln.cuda.compile;

import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Helpers for compiler messages: the source lines a log points at, numbered. */
final class Sources {
    private Sources() {}

    private static final Pattern LINE = Pattern.compile("\\((\\d+)\\): (?:catastrophic error|error|warning)");

    /** The lines of {@code source} that {@code log} names ({@code file(12): error ...}), with two lines around each. */
    static String numbered(String source, String log) {
        String[] lines = source.split("\n", -1);
        TreeSet<Integer> show = new TreeSet<>();
        Matcher m = LINE.matcher(log);
        while (m.find() && show.size() < 60) {
            int n = Integer.parseInt(m.group(1));
            for (int k = n - 2; k <= n + 2; k++) if (k >= 1 && k <= lines.length) show.add(k);
        }
        StringBuilder sb = new StringBuilder();
        int last = 0;
        for (int n : show) {
            if (last != 0 && n > last + 1) sb.append("   ...\n");
            sb.append(String.format("%5d| %s%n", n, lines[n - 1]));
            last = n;
        }
        return sb.toString();
    }
}
