package dev.kiln.autoschedule.scheduler;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Ansor's similarity groups (notes §9): tasks whose tags are equal and non-empty and whose FLOPs
 * have the same {@code floor(log_1.618(flops + 1))} are similar, so that a task that is still far
 * slower (in GFLOP/s) than the best of its group is expected to improve. A task leaves its group
 * when it has been tuned a lot more than the others and is still slow ({@link #remove}).
 */
final class SimilarityGroups {
    /** The base of the logarithm that buckets FLOPs (the golden ratio, as in Ansor). */
    public static final double LOG_BASE = 1.618;

    private final int[] groupOf;
    private final List<List<Integer>> members = new ArrayList<>();

    /** The groups of tasks with these tags and FLOPs (index i is task i). */
    public SimilarityGroups(List<String> tags, long[] flops) {
        groupOf = new int[tags.size()];
        Map<String, Integer> ids = new LinkedHashMap<>();
        for (int i = 0; i < groupOf.length; i++) {
            String k = key(tags.get(i), flops[i]);
            if (k.isEmpty()) {
                groupOf[i] = -1;
                continue;
            }
            int g = ids.computeIfAbsent(k, x -> {
                members.add(new ArrayList<>());
                return members.size() - 1;
            });
            groupOf[i] = g;
            members.get(g).add(i);
        }
    }

    /**
     * The group key of a task: {@code tag + "_" + floor(log_1.618(flops + 1))} (Ansor's
     * {@code derive_similarity_tag}, whose concatenated op tags end with "_"); empty for an empty tag.
     */
    public static String key(String tag, long flops) {
        if (tag.isEmpty()) return "";
        return tag + "_" + (int) Math.floor(Math.log(flops + 1.0) / Math.log(LOG_BASE));
    }

    /** The tasks of task {@code i}'s group, in index order (including i); empty if it has none. */
    public List<Integer> members(int i) {
        return groupOf[i] < 0 ? List.of() : List.copyOf(members.get(groupOf[i]));
    }

    /** Takes task {@code i} out of its group. */
    public void remove(int i) {
        if (groupOf[i] < 0) return;
        members.get(groupOf[i]).remove(Integer.valueOf(i));
        groupOf[i] = -1;
    }
}
