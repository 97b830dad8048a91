package dev.kiln.autoschedule.model;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * Grows one regression tree on binned rows from per-row gradients and hessians (XGBoost's exact
 * gain formula on histograms): a node splits on the (feature, bin) of largest gain while it is
 * shallower than the limit, has two rows or more, and the gain beats gamma; the child with fewer
 * rows gets a fresh histogram and the other one the parent's minus it. Leaf values are
 * {@code -eta * G / (H + lambda)}. The rows end up grouped by leaf in {@code perm}, and
 * {@link #rowValue} gives each row's leaf value, so the booster updates its predictions without
 * walking the tree.
 */
final class TreeBuilder {
    private static final int PARALLEL_MIN_ROWS = 4096;

    private final byte[] bins;
    private final int width;
    private final int[] nbins;
    private final int[] offset;
    private final int histSize;
    private final FeatureBins fb;
    private final GbdtParams p;
    private final ExecutorService pool;
    private final ArrayDeque<double[]> spare = new ArrayDeque<>();
    private final int[] perm;
    final double[] rowValue;

    private double[] grad, hess;
    private Gbdt.TreeArrays out;

    TreeBuilder(byte[] bins, int rows, FeatureBins fb, GbdtParams p, ExecutorService pool) {
        this.bins = bins;
        this.fb = fb;
        this.width = fb.width();
        this.p = p;
        this.pool = pool;
        this.nbins = new int[width];
        this.offset = new int[width];
        int s = 0;
        for (int j = 0; j < width; j++) {
            nbins[j] = fb.bins(j);
            offset[j] = s;
            s += nbins[j];
        }
        this.histSize = s;
        this.perm = new int[rows];
        this.rowValue = new double[rows];
    }

    /** Grows a tree for these gradients and appends it to {@code trees}; returns its root. */
    int grow(double[] grad, double[] hess, Gbdt.TreeArrays trees) {
        this.grad = grad;
        this.hess = hess;
        this.out = trees;
        for (int i = 0; i < perm.length; i++) perm[i] = i;
        double[] h = take();
        build(h, 0, perm.length);
        double g0 = 0, h0 = 0;
        for (int i = 0; i < perm.length; i++) {
            g0 += grad[i];
            h0 += hess[i];
        }
        int root = node(h, 0, perm.length, g0, h0, 0);
        spare.push(h);
        return root;
    }

    private double[] take() {
        double[] h = spare.poll();
        if (h == null) return new double[histSize * 3];
        java.util.Arrays.fill(h, 0);
        return h;
    }

    /** Grows the subtree of rows {@code perm[begin:end]} whose histogram is {@code hist}; returns its node. */
    private int node(double[] hist, int begin, int end, double g, double h, int depth) {
        int n = end - begin;
        int bestF = -1, bestB = -1;
        double bestGain = 0;
        if (depth < p.maxDepth() && n >= 2) {
            double parent = g * g / (h + p.lambda());
            for (int j = 0; j < width; j++) {
                double gl = 0, hl = 0, cl = 0;
                int o = offset[j] * 3;
                for (int b = 0; b < nbins[j] - 1; b++) {
                    gl += hist[o + 3 * b];
                    hl += hist[o + 3 * b + 1];
                    cl += hist[o + 3 * b + 2];
                    if (cl == 0) continue;
                    if (cl == n) break;
                    double hr = h - hl;
                    if (hl < p.minChildWeight() || hr < p.minChildWeight()) continue;
                    double gr = g - gl;
                    double gain = 0.5 * (gl * gl / (hl + p.lambda()) + gr * gr / (hr + p.lambda()) - parent);
                    if (gain > bestGain) {
                        bestGain = gain;
                        bestF = j;
                        bestB = b;
                    }
                }
            }
        }
        if (bestF < 0 || bestGain <= p.gamma()) {
            double v = -p.learningRate() * g / (h + p.lambda());
            for (int i = begin; i < end; i++) rowValue[perm[i]] = v;
            return out.leaf(v);
        }
        // Partition: rows whose bin is at most bestB go left.
        int i = begin, k = end - 1;
        while (i <= k) {
            if ((bins[perm[i] * width + bestF] & 0xff) <= bestB) {
                i++;
            } else {
                int t = perm[i];
                perm[i] = perm[k];
                perm[k--] = t;
            }
        }
        int mid = i;
        double gl = 0, hl = 0;
        for (int r = begin; r < mid; r++) {
            gl += grad[perm[r]];
            hl += hess[perm[r]];
        }
        boolean leftSmall = mid - begin <= end - mid;
        double[] small = take();
        if (leftSmall) build(small, begin, mid);
        else build(small, mid, end);
        for (int q = 0; q < hist.length; q++) hist[q] -= small[q];
        double[] left = leftSmall ? small : hist, right = leftSmall ? hist : small;
        int id = out.split(fb.active[bestF], fb.cuts[bestF][bestB]);
        int l = node(left, begin, mid, gl, hl, depth + 1);
        int r = node(right, mid, end, g - gl, h - hl, depth + 1);
        out.link(id, l, r);
        spare.push(small);
        return id;
    }

    /** Fills {@code hist} (zeroed) from rows {@code perm[begin:end]}, split over features when there are many rows. */
    private void build(double[] hist, int begin, int end) {
        if (pool == null || end - begin < PARALLEL_MIN_ROWS) {
            build(hist, begin, end, 0, width);
            return;
        }
        int t = p.threads();
        List<Future<?>> fs = new ArrayList<>();
        for (int c = 0; c < t; c++) {
            int f0 = width * c / t, f1 = width * (c + 1) / t;
            fs.add(pool.submit(() -> build(hist, begin, end, f0, f1)));
        }
        for (Future<?> f : fs) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while training", e);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalStateException("histogram build failed", e.getCause());
            }
        }
    }

    private void build(double[] hist, int begin, int end, int f0, int f1) {
        for (int i = begin; i < end; i++) {
            int r = perm[i];
            double g = grad[r], h = hess[r];
            int base = r * width;
            for (int j = f0; j < f1; j++) {
                int idx = (offset[j] + (bins[base + j] & 0xff)) * 3;
                hist[idx] += g;
                hist[idx + 1] += h;
                hist[idx + 2] += 1;
            }
        }
    }
}
