package dev.kiln.autoschedule.model;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.feature.FeatureExtractor;
import dev.kiln.autoschedule.feature.ProgramFeatures;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The features of recently seen programs, by task and candidate key, so that a program that
 * stays in the population across generations and rounds is lowered once. Least recently used
 * entries go first. Thread-safe; extraction itself runs outside the lock.
 */
public final class FeatureCache {
    private final int capacity;
    private final Map<String, ProgramFeatures> map;
    private long hits, misses;

    /** A cache of at most {@code capacity} programs (0: no caching). */
    public FeatureCache(int capacity) {
        if (capacity < 0)
            throw new dev.kiln.ir.KilnException("feature cache capacity must not be negative, got " + capacity);
        this.capacity = capacity;
        this.map = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, ProgramFeatures> e) {
                return size() > FeatureCache.this.capacity;
            }
        };
    }

    /** The features of {@code c}, extracted on a miss. */
    public ProgramFeatures get(SearchTask task, FeatureExtractor fx, Candidate c) {
        String key = task.workloadKey() + '\n' + task.targetDescription() + '\n' + c.key();
        synchronized (this) {
            ProgramFeatures f = map.get(key);
            if (f != null) {
                hits++;
                return f;
            }
            misses++;
        }
        ProgramFeatures f = fx.extract(c);
        if (capacity > 0) {
            synchronized (this) {
                map.put(key, f);
            }
        }
        return f;
    }

    public synchronized long hits() {
        return hits;
    }

    /** The most programs it keeps. */
    public int capacity() {
        return capacity;
    }

    public synchronized long misses() {
        return misses;
    }
}
