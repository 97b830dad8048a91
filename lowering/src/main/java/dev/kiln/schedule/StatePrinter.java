package dev.kiln.schedule;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Prints a loop state the way Ansor does: placeholders, then each root stage's loops with the
 * stages computed inside them, one line per loop ({@code parallel i.0@j.0@ (0,64)}). Two states
 * with the same printout have the same loop structure, which is what the search deduplicates on.
 */
public final class StatePrinter {
    private final LoopState s;
    private final StringBuilder sb = new StringBuilder();

    private StatePrinter(LoopState s) {
        this.s = s;
    }

    public static String print(LoopState s) {
        StatePrinter p = new StatePrinter(s);
        List<String> inputs = s.stages().stream()
                .filter(Stage::isPlaceholder)
                .map(Stage::name)
                .toList();
        p.sb.append("Placeholder: ").append(String.join(", ", inputs)).append('\n');
        for (int i = 0; i < s.stages().size(); i++) {
            Stage st = s.stages().get(i);
            if (!st.isPlaceholder() && st.computeAt() == ComputeAtKind.ROOT) p.stage(i, 0);
        }
        return p.sb.toString();
    }

    private void stage(int id, int depth) {
        Stage st = s.stages().get(id);
        if (st.autoUnrollMaxStep() > 0) {
            line(depth)
                    .append(st.name())
                    .append(" auto_unroll: ")
                    .append(st.autoUnrollMaxStep())
                    .append('\n');
        }
        if (st.storageAlign() != null) {
            line(depth)
                    .append(st.name())
                    .append(" storage_align: ")
                    .append(st.storageAlign())
                    .append('\n');
        }
        if (st.storageBlock() != null) {
            line(depth)
                    .append(st.name())
                    .append(" storage_block: ")
                    .append(st.storageBlock())
                    .append('\n');
        }
        int d = depth;
        for (Iter it : st.iters()) {
            if (!(it.extent() != null && it.extent() == 1)) {
                line(d).append(it.annotation().displayName())
                        .append(' ')
                        .append(it.name())
                        .append(" (0,")
                        .append(it.extent() == null ? "?" : it.extent())
                        .append(")\n");
                d++;
            }
            for (int a : s.attachedTo(id)) {
                if (s.stages().get(a).attachIter() == it.uid()) stage(a, d);
            }
        }
        line(d).append(st.name()).append(" = ...");
        if (st.computeAt() == ComputeAtKind.INLINED) sb.append(" (inlined)");
        sb.append('\n');
        for (int i = 0; i < s.stages().size(); i++) {
            Stage x = s.stages().get(i);
            if (x.computeAt() == ComputeAtKind.INLINED && s.consumers(i).contains(id)) {
                line(d).append(x.name()).append(" inlined\n");
            }
        }
    }

    private StringBuilder line(int depth) {
        return sb.append("  ".repeat(depth));
    }

    static String names(List<Iter> iters) {
        return iters.stream().map(Iter::name).collect(Collectors.joining(", "));
    }
}
