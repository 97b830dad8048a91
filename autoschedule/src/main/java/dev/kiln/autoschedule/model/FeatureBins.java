package dev.kiln.autoschedule.model;

import java.util.Arrays;

/**
 * Histogram bins of the features of a training set: for every feature that takes more than one
 * value, ascending cut points (a value falls in the first bin whose cut is at least the value, or
 * in the last bin past every cut). Features with a single value cannot split and are left out.
 * Cuts come from a strided sample of at most {@value #SAMPLE} rows: every distinct value when
 * there are few, else quantiles.
 */
final class FeatureBins {
    static final int SAMPLE = 8192;

    /** The original index of each active feature. */
    final int[] active;
    /** Per active feature, its cuts; bin {@code j < cuts.length} holds values {@code <= cuts[j]}. */
    final float[][] cuts;

    private FeatureBins(int[] active, float[][] cuts) {
        this.active = active;
        this.cuts = cuts;
    }

    /** Bins for {@code rows} rows of {@code width} features stored row after row in {@code x}. */
    static FeatureBins of(float[] x, int rows, int width, int maxBins) {
        int step = Math.max(1, rows / SAMPLE);
        int n = (rows + step - 1) / step;
        float[] col = new float[n];
        int[] active = new int[width];
        float[][] cuts = new float[width][];
        int k = 0;
        for (int f = 0; f < width; f++) {
            for (int i = 0, r = 0; r < rows; r += step) col[i++] = x[r * width + f];
            Arrays.sort(col, 0, n);
            float[] c = cutsOf(col, n, maxBins);
            if (c.length == 0) continue;
            active[k] = f;
            cuts[k++] = c;
        }
        return new FeatureBins(Arrays.copyOf(active, k), Arrays.copyOf(cuts, k));
    }

    private static float[] cutsOf(float[] sorted, int n, int maxBins) {
        int distinct = 1;
        for (int i = 1; i < n; i++) if (sorted[i] != sorted[i - 1]) distinct++;
        if (distinct <= 1) return new float[0];
        float[] out;
        int m = 0;
        if (distinct <= maxBins) {
            out = new float[distinct - 1];
            for (int i = 0; i < n - 1 && m < out.length; i++) if (sorted[i] != sorted[i + 1]) out[m++] = sorted[i];
            return out;
        }
        out = new float[maxBins - 1];
        for (int j = 0; j < maxBins - 1; j++) {
            float v = sorted[(int) ((long) (j + 1) * n / maxBins) - 1];
            if (v < sorted[n - 1] && (m == 0 || v > out[m - 1])) out[m++] = v;
        }
        return Arrays.copyOf(out, m);
    }

    int width() {
        return active.length;
    }

    /** The number of bins of active feature {@code j}. */
    int bins(int j) {
        return cuts[j].length + 1;
    }

    /** The bin of value {@code v} of active feature {@code j}. */
    int bin(int j, float v) {
        float[] c = cuts[j];
        int lo = 0, hi = c.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (v <= c[mid]) hi = mid;
            else lo = mid + 1;
        }
        return lo;
    }

    /** The bins of every row, row after row ({@link #width()} per row), as unsigned bytes. */
    byte[] binAll(float[] x, int rows, int width) {
        int w = active.length;
        byte[] out = new byte[rows * w];
        for (int r = 0; r < rows; r++) {
            int base = r * width;
            for (int j = 0; j < w; j++) out[r * w + j] = (byte) bin(j, x[base + active[j]]);
        }
        return out;
    }
}
