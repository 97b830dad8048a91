package dev.kiln.autoschedule.feature;

import static dev.kiln.autoschedule.feature.FeatureLayout.log2p;

import dev.kiln.autoschedule.feature.FeatureLayout.Position;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.Var;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.Store;
import dev.kiln.tir.ThreadAxis;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The features of one store in its loop nest (everything but the arithmetic counts, which the
 * caller accumulates over the stores to the same buffer). Also records the store's touches in
 * the tables of its loops, for the statements that follow.
 */
final class StoreFeatures {
    private static final int LOOP_MULTIPLE_READ = 0, SERIAL_MULTIPLE_READ_WRITE = 1, NO_REUSE = 2;

    private final LoopNest nest;
    private final Map<Var, Affine> lets;
    private final int cacheLine;
    private final float[] f;

    private StoreFeatures(LoopNest nest, Map<Var, Affine> lets, int cacheLine, float[] out) {
        this.nest = nest;
        this.lets = lets;
        this.cacheLine = cacheLine;
        this.f = out;
    }

    /** Per-store facts the walker knows: the enclosing auto-unroll step and the stored buffer's allocation. */
    record Context(
            long autoUnrollMaxStep, boolean gpu, double allocElements, double allocOuterProduct, boolean allocated) {}

    /**
     * Writes the features of {@code store} (all but the 16 op counts) into {@code out}, given the
     * per-iteration float operations of its value.
     */
    static void compute(
            Store store,
            double floatOps,
            LoopNest nest,
            Map<Var, Affine> lets,
            int cacheLine,
            Context ctx,
            float[] out) {
        new StoreFeatures(nest, lets, cacheLine, out).run(store, floatOps, ctx);
    }

    private void run(Store store, double floatOps, Context ctx) {
        int n = nest.depth();
        double outer = nest.product();
        Map<Buffer, BufferAccess> accesses = accesses(store);
        BufferAccess stored = accesses.get(store.buffer().base());

        annotation(FeatureLayout.VECTORIZE, ForKind.VECTORIZED, stored);
        annotation(FeatureLayout.UNROLL, ForKind.UNROLLED, stored);
        annotation(FeatureLayout.PARALLEL, ForKind.PARALLEL, stored);
        threads(ctx.gpu());

        // Touched regions per loop level, innermost first; the totals make the intensity curve.
        List<BufferAccess> list = new ArrayList<>(accesses.values());
        double[] memBytes = new double[n];
        double[] computeOps = new double[n];
        for (int i = n - 1; i >= 0; i--) {
            Affine.Ranges r = nest.rangesFrom(i);
            Map<Buffer, List<LoopNest.Touch>> table = nest.touched(i);
            double bytes = 0;
            for (int b = 0; b < list.size(); b++) {
                BufferAccess a = list.get(b);
                double e = a.region(r, null);
                table.computeIfAbsent(a.buffer, k -> new ArrayList<>(2)).add(new LoopNest.Touch(e, a.elementBytes));
                bytes += e * a.elementBytes;
            }
            memBytes[i] = bytes;
            computeOps[i] = floatOps * nest.productFrom(i);
        }

        // Per-buffer features, then the five buffers with the most lines (then bytes).
        List<double[]> rows = new ArrayList<>();
        for (int b = 0; b < list.size(); b++) rows.add(bufferRow(list.get(b), outer));
        rows.sort((x, y) -> x[B_SORT_LINES] != y[B_SORT_LINES]
                ? Double.compare(y[B_SORT_LINES], x[B_SORT_LINES])
                : Double.compare(y[B_SORT_BYTES], x[B_SORT_BYTES]));
        for (int b = 0; b < Math.min(FeatureLayout.MAX_BUFFERS, rows.size()); b++) {
            double[] row = rows.get(b);
            int o = FeatureLayout.buffer(b);
            for (int k = 0; k < FeatureLayout.PER_BUFFER; k++) {
                boolean oneHot = (k >= FeatureLayout.B_ACCESS_TYPE && k < FeatureLayout.B_BYTES)
                        || (k >= FeatureLayout.B_REUSE_TYPE && k < FeatureLayout.B_REUSE_DIS_ITER);
                f[o + k] = oneHot ? (float) row[k] : log2p(row[k]);
            }
        }

        curve(memBytes, computeOps);
        innerLoops(stored, memBytes, computeOps);

        // Allocation of the stored buffer, and the outer scope.
        if (ctx.allocated()) {
            double size = ctx.allocElements() * store.buffer().dtype().bytes();
            f[FeatureLayout.ALLOCATION] = log2p(size);
            f[FeatureLayout.ALLOCATION + 1] = log2p(ctx.allocElements() * ctx.allocOuterProduct());
            f[FeatureLayout.ALLOCATION + 2] = log2p(ctx.allocOuterProduct());
            f[FeatureLayout.ALLOCATION + 3] = log2p(outer / ctx.allocOuterProduct());
        }
        f[FeatureLayout.OUTER] = log2p(outer);
        f[FeatureLayout.OUTER + 1] = log2p(n);
        f[FeatureLayout.OUTER + 2] = log2p(ctx.autoUnrollMaxStep());
    }

    // Two extra slots past the 18 features of a buffer row carry its sort keys.
    private static final int B_SORT_LINES = FeatureLayout.PER_BUFFER, B_SORT_BYTES = FeatureLayout.PER_BUFFER + 1;

    private double[] bufferRow(BufferAccess a, double outer) {
        int n = nest.depth();
        double[] row = new double[FeatureLayout.PER_BUFFER + 2];
        int acc = a.type == (BufferAccess.READ | BufferAccess.WRITE) ? 2 : a.type == BufferAccess.WRITE ? 1 : 0;
        row[FeatureLayout.B_ACCESS_TYPE + acc] = 1;
        double bytes = outer * a.elementBytes * a.indices.size();
        long[] region = new long[a.shape.length];
        double uniqueBytes = a.region(nest.rangesFrom(0), region) * a.elementBytes;

        // Lines: the innermost loop that moves through the buffer, and its stride.
        double stride = 0, reduceRatio = 1;
        int strideLevel = -1;
        for (int i = n - 1; i >= 0; i--) {
            stride = a.stride(nest.var(i));
            if (stride != 0) {
                strideLevel = i;
                break;
            }
            reduceRatio *= nest.extent(i);
        }
        double lines = Math.max(1, outer / reduceRatio * Math.min(1, stride * a.elementBytes / cacheLine));
        double uniqueLines = Math.max(1, uniqueBytes / Math.min(a.contiguousBytes(region), cacheLine));

        // Reuse.
        int reuse = NO_REUSE;
        double disIter = 1, disBytes = 0, count = 0;
        for (int i = n - 1; i >= 0; i--) {
            Map<Buffer, List<LoopNest.Touch>> table = nest.touched(i);
            long extent = nest.extent(i);
            if (!a.uses(nest.var(i))) {
                if (disBytes == 0) {
                    for (List<LoopNest.Touch> ts : table.values())
                        for (LoopNest.Touch t : ts) disBytes += t.elementBytes();
                }
                reuse = LOOP_MULTIPLE_READ;
                count = extent;
                break;
            }
            disIter *= extent;
            disBytes = 0;
            for (List<LoopNest.Touch> ts : table.values())
                for (LoopNest.Touch t : ts) disBytes += t.elements() * t.elementBytes();
            List<LoopNest.Touch> mine = table.get(a.buffer);
            if (mine != null && mine.size() > 1) {
                double least = Double.MAX_VALUE;
                for (LoopNest.Touch t : mine) least = Math.min(least, t.elements());
                reuse = SERIAL_MULTIPLE_READ_WRITE;
                count = mine.size() - 1;
                disIter = least / extent;
                disBytes = disBytes / extent;
                break;
            }
        }
        if (reuse == NO_REUSE) {
            disIter = 0;
            disBytes = 0;
        }
        row[FeatureLayout.B_BYTES] = bytes;
        row[FeatureLayout.B_UNIQUE_BYTES] = uniqueBytes;
        row[FeatureLayout.B_LINES] = lines;
        row[FeatureLayout.B_UNIQUE_LINES] = uniqueLines;
        row[FeatureLayout.B_REUSE_TYPE + reuse] = 1;
        row[FeatureLayout.B_REUSE_DIS_ITER] = disIter;
        row[FeatureLayout.B_REUSE_DIS_BYTES] = disBytes;
        row[FeatureLayout.B_REUSE_CT] = count;
        double div = count > 0.5 ? count : 0.5;
        row[FeatureLayout.B_BYTES_PER_REUSE] = bytes / div;
        row[FeatureLayout.B_UNIQUE_BYTES_PER_REUSE] = uniqueBytes / div;
        row[FeatureLayout.B_LINES_PER_REUSE] = lines / div;
        row[FeatureLayout.B_UNIQUE_LINES_PER_REUSE] = uniqueLines / div;
        row[FeatureLayout.B_STRIDE] = strideLevel == n - 1 ? stride : 0;
        row[B_SORT_LINES] = lines;
        row[B_SORT_BYTES] = bytes;
        return row;
    }

    /** The store's buffer (written) and every buffer its value loads, with their index forms. */
    private Map<Buffer, BufferAccess> accesses(Store store) {
        Map<Buffer, BufferAccess> m = new LinkedHashMap<>();
        Map<Expr, Affine> memo = new IdentityHashMap<>();
        add(m, memo, store.buffer(), store.indices(), BufferAccess.WRITE);
        Exprs.forEach(store.value(), e -> {
            if (e instanceof BufferLoad l) add(m, memo, l.buffer(), l.indices(), BufferAccess.READ);
        });
        return m;
    }

    private void add(Map<Buffer, BufferAccess> m, Map<Expr, Affine> memo, Buffer b, List<Expr> idx, int type) {
        BufferAccess a = m.computeIfAbsent(b.base(), BufferAccess::new);
        a.type |= type;
        if (idx.size() != a.shape.length) return; // a flat view of a buffer seen with its full rank
        Affine[] forms = new Affine[idx.size()];
        for (int d = 0; d < forms.length; d++) forms[d] = memo.computeIfAbsent(idx.get(d), e -> Affine.of(e, lets));
        for (Affine[] seen : a.indices) if (java.util.Arrays.equals(seen, forms)) return;
        a.indices.add(forms);
    }

    /** num, prod, len and position of the loops of {@code kind} (parallel includes thread-bound loops). */
    private void annotation(int offset, ForKind kind, BufferAccess stored) {
        int n = nest.depth(), num = 0, innermost = -1;
        double prod = 1;
        for (int i = 0; i < n; i++) {
            ForKind k = nest.kind(i);
            if (k == kind || (kind == ForKind.PARALLEL && k == ForKind.THREAD_BOUND)) {
                num++;
                prod *= nest.extent(i);
                innermost = i;
            }
        }
        f[offset] = log2p(num);
        f[offset + 1] = log2p(num == 0 ? 0 : prod);
        f[offset + 2] = log2p(num == 0 ? 0 : nest.extent(innermost));
        f[offset + 3 + position(kind, innermost, stored).ordinal()] = 1;
    }

    private Position position(ForKind kind, int innermost, BufferAccess stored) {
        if (innermost < 0) return Position.NONE;
        int n = nest.depth();
        boolean[] spatial = new boolean[n];
        for (int i = 0; i < n; i++) spatial[i] = stored != null && stored.uses(nest.var(i));
        boolean anySpatial = false, anyReduce = false;
        for (int i = 0; i < n; i++) {
            ForKind k = nest.kind(i);
            if (k == kind || (kind == ForKind.PARALLEL && k == ForKind.THREAD_BOUND)) {
                anySpatial |= spatial[i];
                anyReduce |= !spatial[i];
            }
        }
        if (anySpatial && anyReduce) return Position.MIXED;
        boolean cls = spatial[innermost], inside = false, outside = false;
        for (int i = 0; i < n; i++) {
            if (spatial[i] != cls) continue;
            inside |= i > innermost;
            outside |= i < innermost;
        }
        if (!inside) return cls ? Position.INNER_SPATIAL : Position.INNER_REDUCE;
        if (!outside) return cls ? Position.OUTER_SPATIAL : Position.OUTER_REDUCE;
        return cls ? Position.MIDDLE_SPATIAL : Position.MIDDLE_REDUCE;
    }

    private void threads(boolean gpu) {
        f[FeatureLayout.IS_GPU] = gpu ? 1 : 0;
        double[] ext = {1, 1, 1, 1, 1, 1, 1};
        for (int i = 0; i < nest.depth(); i++) {
            ThreadAxis t = nest.axis(i);
            if (t != null) ext[t.ordinal()] *= nest.extent(i);
        }
        for (int k = 0; k < ext.length; k++) f[FeatureLayout.THREAD_EXTENTS + k] = log2p(ext[k]);
    }

    /** Kiln's inner-loop group ({@link FeatureLayout#INNER}). */
    private void innerLoops(BufferAccess stored, double[] memBytes, double[] computeOps) {
        int n = nest.depth();
        int innerReduce = -1;
        for (int i = n - 1; i >= 0 && innerReduce < 0; i--)
            if (stored == null || !stored.uses(nest.var(i))) innerReduce = i;
        for (int l = 0; l < FeatureLayout.INNER_LOOPS && l < n; l++) {
            int i = n - 1 - l, o = FeatureLayout.INNER + l * FeatureLayout.PER_INNER_LOOP;
            boolean spatial = stored != null && stored.uses(nest.var(i));
            f[o] = log2p(nest.extent(i));
            f[o + 1] = spatial ? 1 : 0;
            f[o + 2] = spatial ? 0 : 1;
            f[o + 3] = switch (nest.kind(i)) {
                case VECTORIZED -> 1;
                case UNROLLED -> 2;
                case PARALLEL, THREAD_BOUND -> 3;
                default -> 0;
            };
        }
        int t = FeatureLayout.INNER_TOTALS;
        f[t] = log2p(nest.productFrom(innerReduce + 1));
        if (innerReduce >= 0) {
            f[t + 1] = log2p(nest.extent(innerReduce));
            f[t + 2] = log2p(innerReduce + 1 < n ? memBytes[innerReduce + 1] : 0);
        }
        double l1 = 0, l2 = 0;
        for (int i = n - 1; i >= 0; i--) {
            if (memBytes[i] <= L1_BYTES) l1 = computeOps[i];
            if (memBytes[i] <= L2_BYTES) l2 = computeOps[i];
        }
        f[t + 3] = log2p(l1);
        f[t + 4] = log2p(l2);
    }

    /** The cache sizes of the fit features: a typical L1 data cache and a share of an L2. */
    private static final double L1_BYTES = 32 * 1024, L2_BYTES = 1024 * 1024;

    /**
     * Ten samples of arithmetic intensity against work: level i (from the innermost) does
     * computeOps[i] operations on memBytes[i] bytes; in log2 scale (as Ansor), the intensity
     * log2p(ops) / log2p(bytes) is interpolated at ops = total * (k + 1) / 10 in log2p(ops).
     */
    private void curve(double[] memBytes, double[] computeOps) {
        int n = memBytes.length;
        if (n == 0 || computeOps[0] <= 0) return;
        double[] ops = new double[n], intensity = new double[n];
        for (int j = 0; j < n; j++) {
            int i = n - 1 - j; // innermost first
            ops[j] = log2p(computeOps[i]);
            intensity[j] = ops[j] / Math.max(1e-6, log2p(memBytes[i]));
        }
        int pt = 0;
        for (int k = 0; k < FeatureLayout.CURVE_SAMPLES; k++) {
            double at = ops[n - 1] * (k + 1) / FeatureLayout.CURVE_SAMPLES;
            while (pt < n - 1 && ops[pt] < at - 1e-4) pt++;
            double v;
            if (pt == 0 || ops[pt] == ops[pt - 1]) {
                v = intensity[pt];
            } else {
                double slope = (intensity[pt] - intensity[pt - 1]) / (ops[pt] - ops[pt - 1]);
                v = intensity[pt - 1] + slope * (at - ops[pt - 1]);
            }
            f[FeatureLayout.CURVE + k] = (float) v;
        }
    }
}
