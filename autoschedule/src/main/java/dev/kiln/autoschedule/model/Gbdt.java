package dev.kiln.autoschedule.model;

import dev.kiln.ir.KilnException;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Gradient-boosted regression trees for programs made of statements: a program's score is the
 * sum of its statements' scores (Ansor's pack-sum), trained on the program scores under an
 * {@link Objective} (Ansor's weighted squared error, or a pairwise ranking loss). Every statement
 * of a program gets the program's gradient and hessian. Histogram-based and written on plain arrays;
 * training is deterministic. A trained model is immutable and may be shared between threads.
 */
public final class Gbdt {
    private final int[] feature;
    private final float[] threshold;
    private final int[] left;
    private final int[] right;
    private final double[] value;
    private final int[] roots;
    private final int width;

    private Gbdt(TreeArrays t, int[] roots, int width) {
        this.feature = Arrays.copyOf(t.feature, t.size);
        this.threshold = Arrays.copyOf(t.threshold, t.size);
        this.left = Arrays.copyOf(t.left, t.size);
        this.right = Arrays.copyOf(t.right, t.size);
        this.value = Arrays.copyOf(t.value, t.size);
        this.roots = roots;
        this.width = width;
    }

    /**
     * A training set: {@code rows} statements of {@code width} features each, row after row in
     * {@code x}; program {@code p} owns rows {@code start[p]} to {@code start[p + 1] - 1}; its
     * label, weight and group (the task it belongs to: the ranking loss only compares programs of
     * one group).
     */
    public record TrainingSet(float[] x, int width, int[] start, double[] label, double[] weight, int[] group) {
        public TrainingSet {
            int programs = label.length;
            if (weight.length != programs || start.length != programs + 1 || group.length != programs) {
                throw new KilnException("training set: " + programs + " labels, " + weight.length + " weights, "
                        + group.length + " groups, " + start.length + " program offsets");
            }
            if (start[0] != 0 || x.length != (long) start[programs] * width) {
                throw new KilnException(
                        "training set: offsets do not cover the " + x.length / Math.max(1, width) + " rows");
            }
            for (int q = 0; q < programs; q++) {
                if (start[q + 1] < start[q])
                    throw new KilnException("training set: program " + q + " has negative rows");
                if (group[q] < 0) throw new KilnException("training set: program " + q + " has group " + group[q]);
            }
        }

        /** A training set whose programs all belong to one group. */
        public TrainingSet(float[] x, int width, int[] start, double[] label, double[] weight) {
            this(x, width, start, label, weight, new int[label.length]);
        }

        public int rows() {
            return start[start.length - 1];
        }

        public int programs() {
            return label.length;
        }
    }

    /** The seed of the pairs the ranking loss draws (training is deterministic). */
    private static final long PAIR_SEED = 0x6B696C6EL;

    /** Trains a model; throws if the set has no rows. */
    public static Gbdt train(TrainingSet d, GbdtParams p) {
        return train(d, p, null);
    }

    /**
     * Trains {@code p.rounds()} more trees on top of {@code base} (continued boosting, as
     * XGBoost's {@code xgb_model}: the new trees fit what {@code base} gets wrong on {@code d}); the
     * model returned holds {@code base}'s trees and the new ones. A null {@code base} trains from
     * scratch. {@code base} must read at most the set's width: features are only ever appended to the
     * layout ({@code FeatureLayout}), so a base trained before an addition reads the first {@code base.width()}
     * numbers of each wider row as it did, and the new trees may split on the added ones (the bundled
     * pretrained model reads 189 of today's 190).
     */
    public static Gbdt train(TrainingSet d, GbdtParams p, Gbdt base) {
        int rows = d.rows();
        if (rows == 0) throw new KilnException("gbdt: nothing to train on");
        if (base != null && base.width > d.width()) {
            throw new KilnException("gbdt: the base model reads " + base.width
                    + " features per statement, the training set has only " + d.width());
        }
        FeatureBins fb = FeatureBins.of(d.x(), rows, d.width(), p.maxBins());
        byte[] bins = fb.binAll(d.x(), rows, d.width());
        int[] program = new int[rows];
        for (int q = 0; q < d.programs(); q++) Arrays.fill(program, d.start()[q], d.start()[q + 1], q);
        double[] pred = new double[rows];
        if (base != null) for (int r = 0; r < rows; r++) pred[r] = base.predictRow(d.x(), r * d.width());
        double[] sum = new double[d.programs()];
        double[] pg = new double[d.programs()], ph = new double[d.programs()];
        double[] grad = new double[rows], hess = new double[rows];
        int groups = 0;
        for (int g : d.group()) groups = Math.max(groups, g + 1);
        int[] groupStart = new int[groups + 1], groupMembers = new int[d.programs()];
        for (int g : d.group()) groupStart[g + 1]++;
        for (int g = 0; g < groups; g++) groupStart[g + 1] += groupStart[g];
        int[] fill = java.util.Arrays.copyOf(groupStart, groups);
        for (int q = 0; q < d.programs(); q++) groupMembers[fill[d.group()[q]]++] = q;
        SplittableRandom pairs = new SplittableRandom(PAIR_SEED);
        TreeArrays trees = new TreeArrays();
        int baseTrees = base == null ? 0 : base.roots.length;
        int[] roots = new int[baseTrees + p.rounds()];
        if (base != null) base.copyInto(trees, roots);
        ExecutorService pool = p.threads() > 1 && fb.width() > 0
                ? Executors.newFixedThreadPool(p.threads(), r -> {
                    Thread t = new Thread(r, "kiln-gbdt");
                    t.setDaemon(true);
                    return t;
                })
                : null;
        try {
            TreeBuilder tb = new TreeBuilder(bins, rows, fb, p, pool);
            for (int round = 0; round < p.rounds(); round++) {
                Arrays.fill(sum, 0);
                for (int r = 0; r < rows; r++) sum[program[r]] += pred[r];
                p.objective().gradients(sum, d, groupStart, groupMembers, p.pairsPerProgram(), pairs, pg, ph);
                for (int r = 0; r < rows; r++) {
                    grad[r] = pg[program[r]];
                    hess[r] = ph[program[r]];
                }
                roots[baseTrees + round] = tb.grow(grad, hess, trees);
                for (int r = 0; r < rows; r++) pred[r] += tb.rowValue[r];
            }
        } finally {
            if (pool != null) pool.shutdownNow();
        }
        return new Gbdt(trees, roots, d.width());
    }

    /** Appends this model's nodes to {@code t} and writes its roots, shifted, to the start of {@code roots}. */
    private void copyInto(TreeArrays t, int[] roots) {
        int offset = t.size;
        for (int n = 0; n < feature.length; n++) {
            int i = t.add();
            t.feature[i] = feature[n];
            t.threshold[i] = threshold[n];
            t.left[i] = feature[n] >= 0 ? left[n] + offset : 0;
            t.right[i] = feature[n] >= 0 ? right[n] + offset : 0;
            t.value[i] = value[n];
        }
        for (int k = 0; k < this.roots.length; k++) roots[k] = this.roots[k] + offset;
    }

    /**
     * The model's arrays, for saving it: node {@code n} splits on {@code feature[n]} at
     * {@code threshold[n]} (rows whose feature is at most the threshold go {@code left[n]}), or is a
     * leaf worth {@code value[n]} when {@code feature[n] < 0}; the trees start at {@code roots}.
     */
    public record Nodes(
            int width, int[] roots, int[] feature, float[] threshold, int[] left, int[] right, double[] value) {}

    /** The arrays of this model (copies), to save it. */
    public Nodes saved() {
        return new Nodes(
                width, roots.clone(), feature.clone(), threshold.clone(), left.clone(), right.clone(), value.clone());
    }

    /** A model from saved arrays; throws naming the first node that does not make a forest of trees. */
    public static Gbdt of(Nodes a) {
        int n = a.feature().length;
        if (a.threshold().length != n || a.left().length != n || a.right().length != n || a.value().length != n) {
            throw new KilnException("gbdt: the node arrays differ in length");
        }
        if (a.width() < 1) throw new KilnException("gbdt: width " + a.width());
        for (int i = 0; i < n; i++) {
            if (a.feature()[i] >= a.width())
                throw new KilnException(
                        "gbdt: node " + i + " splits on feature " + a.feature()[i] + " of " + a.width());
            if (a.feature()[i] >= 0
                    && (a.left()[i] <= i || a.right()[i] <= i || a.left()[i] >= n || a.right()[i] >= n)) {
                throw new KilnException("gbdt: node " + i + " has children " + a.left()[i] + " and " + a.right()[i]
                        + " (children come after their parent, below " + n + ")");
            }
        }
        for (int r : a.roots())
            if (r < 0 || r >= n) throw new KilnException("gbdt: root " + r + " is not a node (" + n + " nodes)");
        TreeArrays t = new TreeArrays();
        for (int i = 0; i < n; i++) {
            int k = t.add();
            t.feature[k] = a.feature()[i];
            t.threshold[k] = a.threshold()[i];
            t.left[k] = a.left()[i];
            t.right[k] = a.right()[i];
            t.value[k] = a.value()[i];
        }
        return new Gbdt(t, a.roots().clone(), a.width());
    }

    /** The score of one statement: its {@code width} features start at {@code x[offset]}. */
    public double predictRow(float[] x, int offset) {
        double s = 0;
        for (int root : roots) {
            int n = root;
            while (feature[n] >= 0) n = x[offset + feature[n]] <= threshold[n] ? left[n] : right[n];
            s += value[n];
        }
        return s;
    }

    /** The score of a program: the sum of its statements' scores ({@code rows} rows from row 0 of {@code x}). */
    public double predictProgram(float[] x, int rows) {
        return predictProgram(x, 0, rows, width);
    }

    /**
     * The score of a program whose {@code rows} statements start at row {@code firstRow} of
     * {@code x}, rows being {@code stride} numbers apart (at least the model's width: a model that
     * reads the first entries of longer rows).
     */
    public double predictProgram(float[] x, int firstRow, int rows, int stride) {
        double s = 0;
        for (int r = firstRow; r < firstRow + rows; r++) s += predictRow(x, r * stride);
        return s;
    }

    /** The number of trees. */
    public int trees() {
        return roots.length;
    }

    /** The number of nodes of all trees. */
    public int nodes() {
        return feature.length;
    }

    /** The features the model was trained on. */
    public int width() {
        return width;
    }

    /** Growable arrays of tree nodes. */
    static final class TreeArrays {
        int[] feature = new int[256];
        float[] threshold = new float[256];
        int[] left = new int[256];
        int[] right = new int[256];
        double[] value = new double[256];
        int size;

        private int add() {
            if (size == feature.length) {
                int n = size * 2;
                feature = Arrays.copyOf(feature, n);
                threshold = Arrays.copyOf(threshold, n);
                left = Arrays.copyOf(left, n);
                right = Arrays.copyOf(right, n);
                value = Arrays.copyOf(value, n);
            }
            return size++;
        }

        int leaf(double v) {
            int i = add();
            feature[i] = -1;
            value[i] = v;
            return i;
        }

        int split(int f, float t) {
            int i = add();
            feature[i] = f;
            threshold[i] = t;
            return i;
        }

        void link(int node, int l, int r) {
            left[node] = l;
            right[node] = r;
        }
    }
}
