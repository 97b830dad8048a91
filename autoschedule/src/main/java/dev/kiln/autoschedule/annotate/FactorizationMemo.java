package dev.kiln.autoschedule.annotate;

import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every way to choose the {@code n} tile sizes of a split of a loop of extent {@code e} exactly:
 * ordered tuples {@code (l1..ln)}, outer to inner, each dividing what the previous ones leave of
 * {@code e}, with the innermost {@code ln <= maxInnermost}. Divisors are tried in ascending
 * order, so the list is in lexicographic order. Results are memoised per (extent, n, max) and
 * shared between threads.
 */
public final class FactorizationMemo {
    private record Key(long extent, int n, int maxInnermost) {}

    private final ConcurrentHashMap<Key, List<List<Integer>>> schemes = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, List<Integer>> divisors = new ConcurrentHashMap<>();

    /** The factorisation schemes; never empty (all ones is always one). */
    public List<List<Integer>> schemes(long extent, int n, int maxInnermost) {
        if (extent <= 0 || extent > Integer.MAX_VALUE)
            throw new KilnException("cannot tile a loop of extent " + extent);
        if (n <= 0) throw new KilnException("a split needs at least one tile size, not " + n);
        if (maxInnermost <= 0)
            throw new KilnException("the innermost tile limit must be positive, not " + maxInnermost);
        return schemes.computeIfAbsent(new Key(extent, n, maxInnermost), k -> enumerate(k.extent, k.n, k.maxInnermost));
    }

    /** The divisors of {@code v}, ascending. */
    public List<Integer> divisors(long v) {
        return divisors.computeIfAbsent(v, FactorizationMemo::computeDivisors);
    }

    private List<List<Integer>> enumerate(long extent, int n, int maxInnermost) {
        List<List<Integer>> out = new ArrayList<>();
        dfs(new int[n], 0, extent, maxInnermost, out);
        return List.copyOf(out);
    }

    private void dfs(int[] stack, int now, long remaining, int maxInnermost, List<List<Integer>> out) {
        if (now == stack.length) {
            if (stack[stack.length - 1] <= maxInnermost) {
                List<Integer> l = new ArrayList<>();
                for (int x : stack) l.add(x);
                out.add(List.copyOf(l));
            }
            return;
        }
        for (int f : divisors(remaining)) {
            if (now == stack.length - 1 && f > maxInnermost) break;
            stack[now] = f;
            dfs(stack, now + 1, remaining / f, maxInnermost, out);
        }
    }

    private static List<Integer> computeDivisors(long v) {
        List<Integer> small = new ArrayList<>(), large = new ArrayList<>();
        for (long d = 1; d * d <= v; d++) {
            if (v % d != 0) continue;
            small.add((int) d);
            if (d != v / d) large.addFirst((int) (v / d));
        }
        small.addAll(large);
        return List.copyOf(small);
    }
}
