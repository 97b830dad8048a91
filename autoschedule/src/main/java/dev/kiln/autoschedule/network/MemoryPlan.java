package dev.kiln.autoschedule.network;

import dev.kiln.graph.Graph;
import dev.kiln.graph.fuse.FusedGroup;
import dev.kiln.graph.fuse.Partition;
import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Where each intermediate value of a compiled network lives: an offset in one arena, reused by
 * liveness (TVM's graph memory planner, ../shared/reference/networks-notes.md §5). Groups run in
 * order; at group {@code i} the output's block is taken first (among the free blocks, chosen by
 * the plan's {@link Reuse} policy and split when larger, else the arena grows), then the blocks of
 * values whose last reader is {@code i} are freed and merged with free neighbours. A group never
 * writes over its own inputs.
 * The output of a reshape-only group is the same block as its input (a view), and that block lives
 * as long as either. Graph inputs, constants and graph outputs are not planned (the caller's
 * arrays and the network's own output buffers).
 *
 * @param offsets    byte offset of each planned value (views included)
 * @param totalBytes the arena's size
 * @param intervals  for each planned value, the first and last group index during which its bytes must be kept
 * @param views      the values that are views of another value's block (reshape-only groups)
 * @param reuse      how an output chose among the free blocks
 */
public record MemoryPlan(
        Map<String, Long> offsets, long totalBytes, Map<String, long[]> intervals, Set<String> views, Reuse reuse) {
    /** Every block starts at a multiple of this. */
    public static final long ALIGNMENT = 64;

    /**
     * Which free block an output takes. {@link #BEST_FIT}: the smallest that fits (the least arena).
     * {@link #RECENT}: the one freed last among those that fit (its bytes were read by the kernels just
     * before, so they are likely still in cache), and within a merged block the part freed last; ties
     * go to the smaller block. Either way no two live values share bytes.
     */
    public enum Reuse {
        BEST_FIT,
        RECENT
    }

    /** The policy networks are built with ({@link NetworkCompiler}). */
    public static final Reuse DEFAULT_REUSE = Reuse.BEST_FIT;

    /** The plan with {@link #DEFAULT_REUSE}. */
    public static MemoryPlan plan(Partition p) {
        return plan(p, DEFAULT_REUSE);
    }

    public static MemoryPlan plan(Partition p, Reuse reuse) {
        Graph g = p.graph();
        List<FusedGroup> groups = p.groups();
        Map<String, String> root = new HashMap<>(); // view -> the value whose block it shares
        Map<String, Integer> def = new LinkedHashMap<>();
        Map<String, Integer> lastUse = new HashMap<>();
        for (FusedGroup gr : groups) {
            for (String in : gr.dag().inputs()) {
                String r = root.getOrDefault(in, in);
                if (def.containsKey(r)) lastUse.merge(r, gr.id(), Math::max);
            }
            String out = gr.output();
            if (g.isOutput(out)) continue;
            if (isView(p, gr)) {
                root.put(
                        out,
                        root.getOrDefault(
                                gr.dag().inputs().getFirst(), gr.dag().inputs().getFirst()));
                continue;
            }
            def.put(out, gr.id());
            lastUse.put(out, gr.id());
        }
        // graph outputs read through a view keep the viewed block: not handled (such outputs are computed into their
        // own buffer)
        Map<Integer, List<String>> freedAt = new HashMap<>();
        for (String v : def.keySet())
            freedAt.computeIfAbsent(lastUse.get(v), k -> new ArrayList<>()).add(v);

        TreeMap<Long, Free> free = new TreeMap<>(); // offset -> free block
        long end = 0;
        Map<String, Long> offsets = new LinkedHashMap<>();
        Map<String, long[]> intervals = new LinkedHashMap<>();
        Map<String, Long> sizes = new HashMap<>();
        for (FusedGroup gr : groups) {
            String out = gr.output();
            if (def.containsKey(out) && def.get(out) == gr.id()) {
                long size = align(g.value(out).bytes());
                Comparator<Map.Entry<Long, Free>> order = reuse == Reuse.RECENT
                        ? Comparator.comparingLong((Map.Entry<Long, Free> e) ->
                                        -e.getValue().stamp())
                                .thenComparingLong(e -> e.getValue().size())
                        : Comparator.comparingLong(e -> e.getValue().size());
                Map.Entry<Long, Free> best = free.entrySet().stream()
                        .filter(e -> e.getValue().size() >= size)
                        .min(order)
                        .orElse(null);
                long off;
                if (best != null) {
                    long start = best.getKey();
                    Free b = best.getValue(); // read before remove: TreeMap may reuse the removed entry
                    free.remove(start);
                    off = reuse == Reuse.RECENT ? Math.min(b.hot(), start + b.size() - size) : start;
                    if (off > start) free.put(start, new Free(off - start, b.stamp(), start));
                    long tail = start + b.size() - (off + size);
                    if (tail > 0) free.put(off + size, new Free(tail, b.stamp(), off + size));
                } else {
                    off = end;
                    end += size;
                }
                offsets.put(out, off);
                sizes.put(out, size);
                intervals.put(out, new long[] {gr.id(), lastUse.get(out)});
            }
            for (String v : freedAt.getOrDefault(gr.id(), List.of()))
                release(free, offsets.get(v), sizes.get(v), gr.id());
        }
        for (var e : root.entrySet()) {
            String r = e.getValue();
            while (root.containsKey(r)) r = root.get(r);
            offsets.put(e.getKey(), offsets.get(r));
            intervals.put(e.getKey(), intervals.get(r));
        }
        if (end < 0) throw new KilnException("memory plan of graph '" + g.name() + "' overflowed");
        return new MemoryPlan(offsets, end, intervals, Set.copyOf(root.keySet()), reuse);
    }

    /**
     * Whether the group runs as a view of its input's block, with no kernel: it only reshapes, and
     * both its input and its output are intermediate values (not graph inputs, constants or outputs).
     */
    public static boolean isView(Partition p, FusedGroup gr) {
        if (!gr.isReshapeOnly()) return false;
        Graph g = p.graph();
        String in = gr.dag().inputs().getFirst();
        return g.producer(in) != null && !g.isOutput(in) && !g.isOutput(gr.output());
    }

    /** A free block: its size, the group that freed its last part (the stamp), and where that part starts. */
    private record Free(long size, long stamp, long hot) {}

    /** Frees a block at group {@code stamp}, merged with free neighbours (all freed at or before it). */
    private static void release(TreeMap<Long, Free> free, long off, long size, long stamp) {
        long hot = off;
        Map.Entry<Long, Free> before = free.floorEntry(off);
        if (before != null && before.getKey() + before.getValue().size() == off) {
            free.remove(before.getKey());
            off = before.getKey();
            size += before.getValue().size();
        }
        Free next = free.get(off + size);
        if (next != null) {
            free.remove(off + size);
            size += next.size();
        }
        free.put(off, new Free(size, stamp, hot));
    }

    private static long align(long bytes) {
        return Math.max(ALIGNMENT, (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT);
    }

    /** The sum of all planned values' sizes, what a plan without reuse would take. */
    public long unplannedBytes(Graph g) {
        return offsets.keySet().stream()
                .filter(v -> !views.contains(v))
                .mapToLong(v -> align(g.value(v).bytes()))
                .sum();
    }
}
