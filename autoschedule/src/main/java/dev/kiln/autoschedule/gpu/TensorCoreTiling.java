package dev.kiln.autoschedule.gpu;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.autoschedule.sketch.SketchRule;
import dev.kiln.ir.Cast;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.TensorRead;
import dev.kiln.schedule.AnnotationStep;
import dev.kiln.schedule.CacheReadStep;
import dev.kiln.schedule.CacheWriteStep;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.ComputeInlineStep;
import dev.kiln.schedule.CudaTensorIntrinsics;
import dev.kiln.schedule.FollowFusedSplitStep;
import dev.kiln.schedule.FollowSplitStep;
import dev.kiln.schedule.FuseStep;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ReorderStep;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.schedule.TensorizeStep;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Kiln's Tensor Core sketch: a float16 or bfloat16 matmul, dense or batch_matmul
 * ({@code C[.., i, j] = sum_k float32(A[.., i, k]) * float32(B[.., k, j] or B[.., j, k])}, A and B
 * placeholders, or gathers of placeholders such as an implicit GEMM's im2col ({@link #gather}), i, j and k
 * multiples of 16) on a target with the wmma intrinsics
 * ({@link CudaTensorIntrinsics}, compute capability 8.0), or a float32 one on a target that allows
 * TF32 ({@code -tf32=1}), gets, besides the usual sketches, one whose innermost 16 x 16 x 16 tile
 * (16 x 16 x 8 for TF32) is tensorized: i and j split by 16 and their outer parts in three
 * undecided levels (block, warp, fragments per warp), k by the tile and its outer part in two (staged
 * per shared-memory tile, fragments per stage), ordered {@code block warp k-stage fragments tile};
 * A and B copied to shared memory at the k-stage loop and fetched by every warp of the block (a gathered
 * operand computed by its copy: a conv's tiles read straight from the image, the padding as zeros)
 * (their fused loops split by the warp level, bound to threadIdx.x); the block loops fused on
 * blockIdx.x, the warp loops on threadIdx.x (each program thread a warp). Random annotation then
 * only samples the tile sizes and the unrolling; the sketch is finished.
 *
 * <p>A matmul with an element-wise epilogue (the DAG's output reads it element-wise: a dense
 * layer's bias, activation and cast, a batch_matmul's scaling; element-wise stages between them
 * inlined) gets the same tiling in one kernel: the matmul is {@code cache_write}n to "shared" (its
 * global copy inlined into the epilogue) and computed at the epilogue's block loop, so it fills
 * the block's tile of C in shared memory; the epilogue follows its splits (block, warp, fragment
 * levels), its block loops on blockIdx.x, its warp loops on threadIdx.x and the rest fused into
 * one loop that the warp's lanes share. The matmul's block loops, of extent 1 there, stay unbound.
 */
public record TensorCoreTiling() implements SketchRule {
    @Override
    public String name() {
        return "TensorCoreTiling";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        return intrinsic(task, access, state, stageId) != null ? Condition.APPLY : Condition.SKIP;
    }

    /**
     * The epilogue stage of a matmul stage: the DAG's output, the matmul's only consumer, reading
     * it element-wise ({@link StagePredicates#singleElementwiseMatchedConsumer}) and reducing
     * nothing, with any element-wise stages between the two inlined; -1 where the matmul is the
     * output itself; -2 where the DAG is anything else.
     */
    static int epilogue(AccessAnalyzer access, LoopState state, int stageId) {
        Stage st = state.stage(stageId);
        int d = -1;
        for (int o = 0; o < state.stages().size(); o++) {
            Stage other = state.stage(o);
            if (o == stageId || other.isPlaceholder() || other.computeAt() == ComputeAtKind.INLINED) continue;
            if (gather(state, o, stageId)) continue; // an operand's gather, copied into shared memory by the sketch
            if (d != -1) return -2;
            d = o;
        }
        if (d == -1) return st.output() ? -1 : -2;
        Stage ds = state.stage(d);
        if (st.output()
                || st.scope() != MemoryScope.GLOBAL // a cache_write stage and its copy
                || !ds.output()
                || ds.computeAt() != ComputeAtKind.ROOT
                || ds.isTiled()
                || StagePredicates.singleElementwiseMatchedConsumer(access, state, stageId) != d
                || ds.iters().stream().anyMatch(it -> it.kind() != IterKind.SPATIAL)) {
            return -2;
        }
        return d;
    }

    /** The intrinsic the stage matches on the task's target, or null. */
    static String intrinsic(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        Stage st = state.stage(stageId);
        if (st.isPlaceholder() || st.isTiled() || st.computeAt() != ComputeAtKind.ROOT) return null;
        if (!(st.op() instanceof ComputeOp op) || op.bodies().size() != 1) return null;
        if (!(op.body() instanceof Reduce r)
                || !r.reducer().name().equals("sum")
                || r.sources().size() != 1) {
            return null;
        }
        int ns = op.axes().size();
        if (ns < 2
                || ns > 3
                || op.reduceAxes().size() != 1
                || op.outputs().get(0).dtype() != DType.FLOAT32) return null;
        if (epilogue(access, state, stageId) == -2) return null;
        if (!(r.sources().get(0) instanceof dev.kiln.ir.Binary mul) || mul.op() != dev.kiln.ir.BinaryOp.MUL) {
            return null;
        }
        TensorRead ra = read(mul.a()), rb = read(mul.b());
        if (ra == null || rb == null) return null;
        DType in = ra.dtype();
        if (rb.dtype() != in) return null;
        // float32 inputs only where the target allows TF32 (inputs rounded to 10-bit significands)
        boolean uncast = mul.a() instanceof TensorRead;
        if (uncast != (mul.b() instanceof TensorRead)) return null;
        if (uncast && (in != DType.FLOAT32 || !(task.target() instanceof dev.kiln.target.CudaTarget ct && ct.tf32())))
            return null;
        if (!uncast && in == DType.FLOAT32) return null;
        IterVar k = op.reduceAxes().get(0),
                i = op.axes().get(ns - 2),
                j = op.axes().get(ns - 1);
        List<IterVar> batch = op.axes().subList(0, ns - 2);
        if (!reads(state, stageId, ra, batch, i, k)) return null;
        boolean bT;
        if (reads(state, stageId, rb, batch, k, j)) bT = false;
        else if (reads(state, stageId, rb, batch, j, k)) bT = true;
        else return null;
        for (IterVar v : List.of(i, j, k)) if (v.extent() % CudaTensorIntrinsics.TILE != 0) return null;
        String name = CudaTensorIntrinsics.forInputs(in, bT);
        if (name == null || !TensorIntrinsics.get(name).availableOn(task.target())) return null;
        return name;
    }

    /** The tensor read of a factor: the factor itself, or under a cast to float32; else null. */
    private static TensorRead read(Expr factor) {
        if (factor instanceof TensorRead t) return t;
        if (factor instanceof Cast c && c.dtype() == DType.FLOAT32 && c.value() instanceof TensorRead t) return t;
        return null;
    }

    private static boolean reads(
            LoopState state, int stageId, TensorRead r, List<IterVar> batch, IterVar row, IterVar col) {
        List<Expr> want = new ArrayList<>();
        want.addAll(batch);
        want.add(row);
        want.add(col);
        if (!r.indices().equals(want)) return false;
        Tensor t = Tensor.of(r);
        if (t.isPlaceholder()) return true;
        for (int o : state.directProducers(stageId)) {
            if (state.stage(o).op() == t.op()) return gather(state, o, stageId);
        }
        return false;
    }

    /**
     * Whether stage {@code o} is a gather of the matmul {@code c}'s operand (an implicit GEMM's im2col, {@link
     * dev.kiln.nn.ConvGemm}): an element-wise computation at root, reducing nothing, that reads placeholders only and
     * is read by {@code c} alone, so the sketch can copy its tiles into shared memory from the placeholders it reads
     * (its {@code cache_read} stage computing it, the stage itself inlined) and the matrix is never written.
     */
    static boolean gather(LoopState state, int o, int c) {
        Stage st = state.stage(o);
        if (st.isPlaceholder()
                || st.computeAt() != ComputeAtKind.ROOT
                || st.isTiled()
                || !(st.op() instanceof ComputeOp op)
                || op.bodies().size() != 1
                || op.body() instanceof Reduce
                || !op.reduceAxes().isEmpty()) {
            return false;
        }
        if (!state.directConsumers(o).equals(List.of(c))) return false;
        for (int in : state.directProducers(o)) if (!state.stage(in).isPlaceholder()) return false;
        return true;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        String name = intrinsic(task, access, state, stageId);
        int d = epilogue(access, state, stageId);
        ComputeOp op = state.stage(stageId).computeOp();
        int ns = op.axes().size();
        String i = op.axes().get(ns - 2).name(), j = op.axes().get(ns - 1).name();
        String k = op.reduceAxes().get(0).name();
        List<String> batch =
                op.axes().subList(0, ns - 2).stream().map(IterVar::name).toList();
        int c = stageId;
        LoopState s = state;
        if (d >= 0) {
            // the matmul into a shared-memory tile of the block, its global copy inlined into the epilogue
            s = s.apply(new CacheWriteStep(c, "shared"));
            s = s.apply(new ComputeInlineStep(c + 1));
            d++;
        }
        List<Integer> warpSplits = new ArrayList<>();
        for (String a : List.of(i, j)) {
            s = split(s, c, a, List.of(CudaTensorIntrinsics.TILE));
            s = split(s, c, a + ".0", Arrays.asList(null, null));
            warpSplits.add(s.steps().size() - 1);
        }
        s = split(s, c, k, List.of(CudaTensorIntrinsics.kTile(name)));
        s = split(s, c, k + ".0", Arrays.asList((Integer) null));
        if (d >= 0) {
            List<String> axes =
                    s.stage(d).computeOp().axes().stream().map(IterVar::name).toList();
            s = tileEpilogue(s, c, d, axes, warpSplits);
        }
        List<String> order = new ArrayList<>(batch);
        order.addAll(List.of(i + ".0.0", j + ".0.0", i + ".0.1", j + ".0.1", k + ".0.0", i + ".0.2", j + ".0.2"));
        order.addAll(List.of(k + ".0.1", i + ".1", j + ".1", k + ".1"));
        s = s.apply(new ReorderStep(c, positions(s.stage(c), order)));
        s = s.apply(new TensorizeStep(c, s.stage(c).indexOf(i + ".1"), name));
        // A and B into shared memory at the k-stage loop; each insertion shifts the later stage ids
        List<Integer> inputs = new ArrayList<>(s.directProducers(c));
        inputs.sort(null);
        List<Integer> fetches = new ArrayList<>();
        int shift = 0;
        for (int in : inputs) {
            int p = in + shift;
            s = s.apply(new CacheReadStep(p, "shared", List.of(c + shift)));
            // a gather (im2col) is computed by its shared copy, straight from the placeholders it reads
            if (!s.stage(p).isPlaceholder()) s = s.apply(new ComputeInlineStep(p));
            shift++;
            int cs = c + shift;
            s = s.apply(new ComputeAtStep(p + 1, cs, s.stage(cs).indexOf(k + ".0.0")));
            fetches.add(p + 1);
            for (int f = 0; f < fetches.size() - 1; f++) if (fetches.get(f) > p) fetches.set(f, fetches.get(f) + 1);
        }
        c += shift;
        List<String> blocks = new ArrayList<>(batch);
        blocks.addAll(List.of(i + ".0.0", j + ".0.0"));
        if (d < 0) {
            s = s.apply(new FuseStep(c, positions(s.stage(c), blocks)));
            s = s.apply(new AnnotationStep(c, 0, IterAnnotation.BLOCK_X));
        }
        // inside the epilogue's block loop the block loops are of extent 1 and stay unbound
        int warps = d < 0 ? 1 : blocks.size();
        s = s.apply(new FuseStep(c, List.of(warps, warps + 1)));
        s = s.apply(new AnnotationStep(c, warps, IterAnnotation.THREAD_X));
        for (int f : fetches) {
            int n = s.stage(f).iters().size();
            if (n > 1) {
                List<Integer> all = new ArrayList<>();
                for (int x = 0; x < n; x++) all.add(x);
                s = s.apply(new FuseStep(f, all));
            }
            // the warp level (level 0 of the outer parts' splits): one program thread per warp
            s = s.apply(new FollowFusedSplitStep(f, 0, warpSplits, 0, true));
            s = s.apply(new AnnotationStep(f, 1, IterAnnotation.THREAD_X));
        }
        return List.of(new Derivation(s, -1));
    }

    /**
     * Tiles the epilogue {@code d} like the matmul {@code c}: its i and j split by 16 and then
     * following the matmul's outer splits ({@code warpSplits}) into block, warp and fragment
     * levels; the batch and block loops fused on blockIdx.x, the warp loops on threadIdx.x (each a
     * warp, as in the matmul), the fragment and 16 x 16 loops fused into one loop the warp's lanes
     * share; the matmul computed at the block loop, its tile the block's.
     */
    private static LoopState tileEpilogue(LoopState state, int c, int d, List<String> axes, List<Integer> warpSplits) {
        LoopState s = state;
        int ns = axes.size();
        List<String> batch = axes.subList(0, ns - 2);
        String i = axes.get(ns - 2), j = axes.get(ns - 1);
        List<String> ij = List.of(i, j);
        for (int a = 0; a < 2; a++) {
            s = split(s, d, ij.get(a), List.of(CudaTensorIntrinsics.TILE));
            s = s.apply(new FollowSplitStep(d, s.stage(d).indexOf(ij.get(a) + ".0"), warpSplits.get(a), 2));
        }
        List<String> order = new ArrayList<>(batch);
        order.addAll(
                List.of(i + ".0.0", j + ".0.0", i + ".0.1", j + ".0.1", i + ".0.2", j + ".0.2", i + ".1", j + ".1"));
        s = s.apply(new ReorderStep(d, positions(s.stage(d), order)));
        int blocks = batch.size() + 2;
        s = s.apply(new FuseStep(d, IntStream.range(0, blocks).boxed().toList()));
        s = s.apply(new AnnotationStep(d, 0, IterAnnotation.BLOCK_X));
        s = s.apply(new FuseStep(d, List.of(1, 2)));
        s = s.apply(new AnnotationStep(d, 1, IterAnnotation.THREAD_X));
        s = s.apply(new FuseStep(d, IntStream.range(2, 6).boxed().toList()));
        return s.apply(new ComputeAtStep(c, d, 0));
    }

    private static LoopState split(LoopState s, int c, String loop, List<Integer> lengths) {
        int at = s.stage(c).indexOf(loop);
        Long extent = s.stage(c).iter(at).extent();
        return s.apply(new SplitStep(c, at, extent, lengths, true));
    }

    private static List<Integer> positions(Stage st, List<String> names) {
        List<Integer> out = new ArrayList<>();
        for (String n : names) out.add(st.indexOf(n));
        return out;
    }
}
