package dev.kiln.autoschedule.feature;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.Var;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.ThreadAxis;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The loops around the statement being visited, outermost first, as the feature extractor sees
 * them: a loop of one iteration is not a loop (its variable is a constant, as after
 * simplification). Each loop keeps a table of what the statements inside it touched so far,
 * per buffer: one entry per statement, with the elements one run of the loop touches (Ansor's
 * for_touch_regions, which the reuse features read).
 */
final class LoopNest {
    /** One statement's touch of a buffer in one run of a loop. */
    record Touch(double elements, int elementBytes) {}

    private final List<Var> vars = new ArrayList<>();
    private final List<long[]> bounds = new ArrayList<>(); // {min, extent}
    private final List<ForKind> kinds = new ArrayList<>();
    private final List<ThreadAxis> axes = new ArrayList<>();
    private final List<Map<Buffer, List<Touch>>> touched = new ArrayList<>();
    private final Map<Var, Integer> level = new IdentityHashMap<>();
    private final Map<Var, Long> constants = new IdentityHashMap<>();

    int depth() {
        return vars.size();
    }

    Var var(int i) {
        return vars.get(i);
    }

    long extent(int i) {
        return bounds.get(i)[1];
    }

    long min(int i) {
        return bounds.get(i)[0];
    }

    ForKind kind(int i) {
        return kinds.get(i);
    }

    /** The thread axis of a thread-bound loop, else null. */
    ThreadAxis axis(int i) {
        return axes.get(i);
    }

    Map<Buffer, List<Touch>> touched(int i) {
        return touched.get(i);
    }

    /** Enters a loop; a loop of one iteration only fixes its variable. */
    void push(Var v, long min, long extent, ForKind kind, ThreadAxis axis) {
        if (extent == 1) {
            constants.put(v, min);
            return;
        }
        level.put(v, vars.size());
        vars.add(v);
        bounds.add(new long[] {min, extent});
        kinds.add(kind);
        axes.add(axis);
        touched.add(new LinkedHashMap<>());
    }

    /** Leaves the loop of {@code v} (entered with {@link #push}). */
    void pop(Var v) {
        if (constants.remove(v) != null) return;
        int i = vars.size() - 1;
        if (vars.get(i) != v) throw new IllegalStateException("loop " + v + " is not the innermost");
        level.remove(v);
        vars.remove(i);
        bounds.remove(i);
        kinds.remove(i);
        axes.remove(i);
        touched.remove(i);
    }

    /** The product of all loop extents (Ansor's outer_loop_prod). */
    double product() {
        double p = 1;
        for (long[] b : bounds) p *= b[1];
        return p;
    }

    /** The product of the extents of loops {@code i} and inside. */
    double productFrom(int i) {
        double p = 1;
        for (int k = i; k < bounds.size(); k++) p *= bounds.get(k)[1];
        return p;
    }

    /** The loop position of {@code v}, or -1 when it is not a loop variable (of more than one iteration). */
    int levelOf(Var v) {
        Integer l = level.get(v);
        return l == null ? -1 : l;
    }

    /**
     * Variable ranges when loops {@code i} and inside run their full range and the loops outside
     * stay at their first iteration; variables of no loop are 0.
     */
    Affine.Ranges rangesFrom(int i) {
        return (v, out) -> {
            Integer l = level.get(v);
            if (l == null) {
                Long c = constants.get(v);
                out[0] = out[1] = c == null ? 0 : c;
                return;
            }
            long[] b = bounds.get(l);
            out[0] = b[0];
            out[1] = l >= i ? b[0] + b[1] - 1 : b[0];
        };
    }
}
