package dev.kiln.autoschedule.feature;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ScheduleLowering;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Ansor's per-statement features ({@link FeatureLayout}) of a lowered program: what the cost
 * model learns from. A candidate is lowered by {@link ScheduleLowering} without the later passes
 * (as Ansor extracts CPU features from the un-flattened loop nest, with the auto-unroll pragma
 * still there); index arithmetic is read through linear forms, so the simplifier is not needed.
 *
 * <p>A "statement" is a buffer written: the stores to one buffer (a reduction's initialisation
 * and update) make one row. Their arithmetic counts add up; the rest describes the last store.
 * Loops of one iteration do not count as loops. Departures from Ansor's extractor, where its
 * code disagrees with its intent: annotation positions are really computed (Ansor always says
 * "mixed"); a multiply feeding an add counts as a multiply-add; the lines of a buffer divide by
 * the extents of the loops that do not move through it (Ansor divides by the innermost extent
 * each time); unique lines use the buffer's own contiguous run; alloc_inner_prod is the product
 * of the loops between the allocation and the store; bytes count every distinct access.
 *
 * <p>An extractor is stateless and may be shared between threads.
 */
public final class FeatureExtractor {
    private final int cacheLineBytes;
    private final boolean gpu;
    private final UnaryOperator<LoopState> measured;

    /** An extractor for a machine with {@code cacheLineBytes}-byte lines; {@code gpu} sets is_gpu. */
    public FeatureExtractor(int cacheLineBytes, boolean gpu) {
        this(cacheLineBytes, gpu, UnaryOperator.identity());
    }

    /**
     * An extractor that describes, for each candidate, the program {@code measured} makes of its
     * state (the program with its constant weights packed, for a task with layout-free arguments).
     */
    private FeatureExtractor(int cacheLineBytes, boolean gpu, UnaryOperator<LoopState> measured) {
        if (cacheLineBytes <= 0) throw new KilnException("cache line must be positive, got " + cacheLineBytes);
        this.cacheLineBytes = cacheLineBytes;
        this.gpu = gpu;
        this.measured = measured;
    }

    /**
     * The extractor of a task's target. For a task with layout-free arguments, the features are
     * those of the program the task measures ({@link SearchTask#measuredState}: weights packed
     * for the candidate's loops), so the model sees the access pattern that is timed.
     */
    public static FeatureExtractor of(SearchTask task) {
        UnaryOperator<LoopState> m = task.layoutFree().isEmpty() ? UnaryOperator.identity() : task::measuredState;
        return new FeatureExtractor(
                task.hardware().cacheLineBytes(), task.target().kind().isGpu(), m);
    }

    /**
     * The features of a candidate; {@link ProgramFeatures#EMPTY} if it cannot be lowered (the
     * cost model then ranks it last).
     */
    public ProgramFeatures extract(Candidate c) {
        PrimFunc f;
        try {
            f = ScheduleLowering.lower("features", measured.apply(c.state()));
        } catch (KilnException | ArithmeticException e) {
            return ProgramFeatures.EMPTY;
        }
        return extract(f);
    }

    /** The features of a lowered program. */
    public ProgramFeatures extract(PrimFunc f) {
        Walker w = new Walker();
        w.visit(f.body());
        List<String> names = new ArrayList<>();
        float[] values = new float[w.rows.size() * FeatureLayout.LENGTH];
        int r = 0;
        for (Map.Entry<Buffer, Row> e : w.rows.entrySet()) {
            names.add(e.getKey().name());
            float[] v = e.getValue().values;
            double[] ops = e.getValue().ops;
            for (int k = 0; k < ops.length; k++) v[FeatureLayout.OPS + k] = FeatureLayout.log2p(ops[k]);
            System.arraycopy(v, 0, values, r++ * FeatureLayout.LENGTH, FeatureLayout.LENGTH);
        }
        return new ProgramFeatures(names, values);
    }

    /** One statement's row: the op counts so far (times the loop trips) and the last store's other features. */
    private static final class Row {
        final double[] ops = new double[16];
        float[] values = new float[FeatureLayout.LENGTH];
    }

    private record Alloc(double elements, double outerProduct) {}

    private final class Walker {
        final LoopNest nest = new LoopNest();
        final Map<Var, Affine> lets = new IdentityHashMap<>();
        final Map<Buffer, Alloc> allocs = new IdentityHashMap<>();
        final Map<Buffer, Row> rows = new LinkedHashMap<>();
        long autoUnroll;
        /** Runs of the tensor intrinsic whose nest is being walked; 0 outside one. */
        double intrinsicRuns;

        void visit(Stmt s) {
            switch (s) {
                case For l -> {
                    long min = l.min() instanceof IntImm c ? c.value() : 0;
                    long ext = l.extent() instanceof IntImm c ? c.value() : 1;
                    if (ext <= 0) return;
                    nest.push(l.var(), min, ext, l.kind(), l.thread());
                    visit(l.body());
                    nest.pop(l.var());
                }
                case Store st -> store(st);
                case Allocate a -> {
                    allocs.put(a.buffer().base(), new Alloc(elements(a.buffer()), nest.product()));
                    visit(a.body());
                }
                case Seq q -> {
                    for (Stmt x : q.stmts()) visit(x);
                }
                case IfThenElse i -> {
                    visit(i.then());
                    if (i.otherwise() != null) visit(i.otherwise());
                }
                case Let l -> {
                    lets.put(l.var(), Affine.of(l.value(), lets));
                    visit(l.body());
                    lets.remove(l.var());
                }
                case Pragma p -> {
                    if (p.tensorIntrinsic() != null) {
                        double saved = intrinsicRuns;
                        intrinsicRuns = nest.product();
                        visit(p.body());
                        intrinsicRuns = saved;
                        return;
                    }
                    if (!p.key().equals(Pragma.AUTO_UNROLL_MAX_STEP)) {
                        visit(p.body());
                        return;
                    }
                    long saved = autoUnroll;
                    autoUnroll = p.value();
                    visit(p.body());
                    autoUnroll = saved;
                }
                case Evaluate e -> {}
                case Barrier b -> {}
            }
        }

        private void store(Store st) {
            Buffer b = st.buffer().base();
            Row row = rows.computeIfAbsent(b, k -> new Row());
            double[] ops = new double[16];
            OpCounter.count(st.value(), lets, ops);
            double outer = nest.product();
            for (int k = 0; k < ops.length; k++) row.ops[k] += ops[k] * outer;
            Alloc a = allocs.get(b);
            StoreFeatures.Context ctx = new StoreFeatures.Context(
                    autoUnroll, gpu, a == null ? 0 : a.elements(), a == null ? 1 : a.outerProduct(), a != null);
            float[] v = new float[FeatureLayout.LENGTH];
            StoreFeatures.compute(st, OpCounter.floatOps(ops), nest, lets, cacheLineBytes, ctx, v);
            v[FeatureLayout.TENSOR_INTRINSIC] = FeatureLayout.log2p(intrinsicRuns);
            row.values = v;
        }
    }

    private static double elements(Buffer b) {
        double n = 1;
        for (Expr e : b.shape()) n *= e instanceof IntImm c ? c.value() : 1;
        return n;
    }
}
