package dev.kiln.autoschedule.tune;

import dev.kiln.autoschedule.sketch.MultiLevelTilingTensorize;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Cast;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Literals;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.TensorRead;
import dev.kiln.nn.LowPrecision;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.schedule.layout.PackFolding;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The layout a dot-product instruction reads, chosen for a matmul written plainly: a stage
 * {@code C[i, j] = sum_k acc(A[i, k]) * acc(B[k, j])} (or {@code B[j, k]}, a dense layer) with uint8 x int8 operands
 * and int32 sums, or bfloat16 x bfloat16 with float32 sums, is rewritten to read B packed
 * ({@link LowPrecision#packMatmulWeight} / {@link LowPrecision#packDenseWeight}: a {@code layout_pack} stage in the
 * program, or folded out of it when B is layout-free) with {@link LowPrecision#matmulPacked}'s body, which the
 * search's {@link MultiLevelTilingTensorize} tiles onto {@code vpdpbusd} / {@code vdpbf16ps} (or AMX's tiles where
 * enabled). {@link AutoSchedule#task} applies it, so {@code AutoSchedule.tune} runs such a computation on the
 * instructions with no hint from the user, as TVM's alter-layout pass packs a VNNI dense's weight; the computation's
 * arguments (names, order, shapes) and every other stage stay as declared, and the rewritten stage keeps its name.
 *
 * <p>Where N is not a multiple of 16 (one vector of sums), B is packed with its columns rounded up with zeros, the
 * product computed on the whole blocks ({@code <stage>_padded}) and the stage copies its N columns from it. A stage
 * that computes such a product but cannot be rewritten is said in {@link Result#notes()}: the CPU lacks the
 * instruction (named with the features it needs), or K is not a multiple of the pair or quad the instruction sums,
 * or the operands are read in an order that would change the kernel's arguments.
 */
public final class DotProductLayout {
    private DotProductLayout() {}

    /**
     * The computation to tune and what was done: {@code dag} itself when nothing was rewritten, {@code rewritten} the
     * names of the stages that now read a packed operand, {@code notes} one line per stage that could not be.
     */
    public record Result(ComputeDAG dag, List<String> rewritten, List<String> notes) {
        public Result {
            rewritten = List.copyOf(rewritten);
            notes = List.copyOf(notes);
        }
    }

    /** The operands of a plain low-precision matmul stage: {@code dense} when B is read as {@code B[j, k]}. */
    private record Product(ComputeOp op, Tensor a, Tensor b, boolean dense, String intrinsic) {}

    /** {@code dag} with every plain low-precision matmul stage that {@code target}'s instructions can run rewritten. */
    public static Result rewrite(ComputeDAG dag, Target target) {
        Set<String> offered = target.kind().isGpu() ? Set.of() : MultiLevelTilingTensorize.offered(target);
        List<String> notes = new ArrayList<>();
        List<String> done = new ArrayList<>();
        Map<Tensor, Tensor> map = new IdentityHashMap<>(); // old tensor -> its rebuilt (or rewritten) tensor
        Map<Tensor, Tensor> packs = new IdentityHashMap<>(); // B (rebuilt) -> its packed layout, one per operand
        for (Operation o : dag.ops()) {
            if (!(o instanceof ComputeOp c)) continue;
            Product p = product(c);
            String why = p == null ? null : refusal(p, target, offered);
            if (p != null && why == null) {
                Tensor b = map.getOrDefault(p.b(), p.b());
                Tensor packed = packs.computeIfAbsent(b, t -> pack(t, p.dense()));
                Tensor x = map.getOrDefault(p.a(), p.a());
                long n = c.output(0).dim(1);
                if (n % LowPrecision.LANES == 0) {
                    map.put(c.output(0), LowPrecision.matmulPacked(c.name(), x, packed));
                } else { // the product on whole blocks of 16 columns (B's padded with zeros), then the user's N
                    Tensor wide = LowPrecision.matmulPacked(c.name() + "_padded", x, packed);
                    map.put(
                            c.output(0),
                            Te.computeN(c.name(), Shape.of(c.output(0).dim(0), n), idx -> wide.at(idx)));
                }
                done.add(c.name());
                continue;
            }
            if (why != null) {
                notes.add("stage '" + c.name() + "' (" + lower(p.a().dtype()) + " x " + lower(p.b().dtype())
                        + " matmul) runs as ordinary loops: " + why);
            }
            if (c.inputTensors().stream().noneMatch(map::containsKey)) continue;
            ComputeOp rebuilt = c.readingReplaced(map);
            for (int v = 0; v < c.outputs().size(); v++) map.put(c.output(v), rebuilt.output(v));
        }
        if (done.isEmpty()) return new Result(dag, List.of(), notes);
        ComputeDAG out = new ComputeDAG(
                dag.outputs().stream().map(t -> map.getOrDefault(t, t)).toList());
        List<String> before = dag.arguments().stream().map(Tensor::name).toList();
        List<String> after = out.arguments().stream().map(Tensor::name).toList();
        if (!before.equals(after)) {
            notes.add("stages " + done + " run as ordinary loops: reading B packed would change the kernel's arguments "
                    + before + " to " + after + " (write the product as A[i, k] * B[k, j], A first)");
            return new Result(dag, List.of(), notes);
        }
        return new Result(out, done, notes);
    }

    private static String lower(DType t) {
        return t.name().toLowerCase(Locale.ROOT);
    }

    /** Why {@code p} cannot run on the instruction its types ask for, or null when it can. */
    private static String refusal(Product p, Target target, Set<String> offered) {
        if (!offered.contains(p.intrinsic())) {
            String why = TensorIntrinsics.get(p.intrinsic()).unavailableReason(target);
            return why != null
                    ? why
                    : "no backend for target " + target + " implements intrinsic '" + p.intrinsic() + "'";
        }
        int g = LowPrecision.group(p.a().dtype());
        long k = ((Reduce) p.op().bodies().getFirst()).axes().getFirst().extent();
        if (k % g != 0) return "its reduction of " + k + " is not a multiple of " + g + " (what one lane sums)";
        return null;
    }

    /**
     * B packed for the instructions ({@link LowPrecision#packMatmulWeight} / {@link LowPrecision#packDenseWeight}),
     * its columns rounded up to a multiple of 16 with zeros where they are not one (a 1000-class classifier's 1008).
     */
    private static Tensor pack(Tensor b, boolean dense) {
        long n = dense ? b.dim(0) : b.dim(1);
        if (n % LowPrecision.LANES == 0)
            return dense ? LowPrecision.packDenseWeight(b) : LowPrecision.packMatmulWeight(b);
        int g = LowPrecision.group(b.dtype());
        long k = dense ? b.dim(1) : b.dim(0), lanes = LowPrecision.LANES;
        long blocks = (n + lanes - 1) / lanes;
        return Te.computeN("packed_" + b.name(), PackFolding.PACK_TAG, Shape.of(blocks, k / g, lanes, g), i -> {
            Expr col = i.get(0).mul(lanes).add(i.get(2)), row = i.get(1).mul(g).add(i.get(3));
            Expr read = dense ? b.at(col, row) : b.at(row, col);
            return Te.select(col.lt(n), read, Literals.of(b.dtype(), 0L));
        });
    }

    /** The operands of {@code c} if it is a plain uint8 x int8 -> int32 or bfloat16 -> float32 matmul, else null. */
    private static Product product(ComputeOp c) {
        if (c.outputs().size() != 1 || c.axes().size() != 2 || c.bodies().size() != 1) return null;
        if (!(c.bodies().getFirst() instanceof Reduce r)) return null;
        if (!r.reducer().name().equals("sum")
                || r.sources().size() != 1
                || r.axes().size() != 1) return null;
        if (!(r.condition() instanceof IntImm one) || one.value() != 1) return null;
        if (!(r.sources().getFirst() instanceof Binary mul) || mul.op() != BinaryOp.MUL) return null;
        IterVar i = c.axes().get(0), j = c.axes().get(1), k = r.axes().getFirst();
        TensorRead a = castRead(mul.a(), r.dtype()), b = castRead(mul.b(), r.dtype());
        if (a == null || b == null) return null;
        if (!reads(a, i, k)) { // B * A: the same product (the rewrite then refuses it by the argument order)
            TensorRead t = a;
            a = b;
            b = t;
        }
        Tensor ta = Tensor.of(a), tb = Tensor.of(b);
        if (ta.shape().rank() != 2 || tb.shape().rank() != 2) return null;
        if (!reads(a, i, k)) return null;
        boolean dense = reads(b, j, k);
        if (!dense && !reads(b, k, j)) return null;
        String intrinsic;
        if (ta.dtype() == DType.UINT8 && tb.dtype() == DType.INT8 && r.dtype() == DType.INT32) {
            intrinsic = TensorIntrinsics.VNNI_U8S8;
        } else if (ta.dtype() == DType.BFLOAT16 && tb.dtype() == DType.BFLOAT16 && r.dtype() == DType.FLOAT32) {
            intrinsic = TensorIntrinsics.BF16_DOT;
        } else {
            return null;
        }
        return new Product(c, ta, tb, dense, intrinsic);
    }

    /** The tensor read inside {@code e} when {@code e} is that read cast to {@code acc}, else null. */
    private static TensorRead castRead(Expr e, DType acc) {
        return e instanceof Cast cast && cast.dtype() == acc && cast.value() instanceof TensorRead t ? t : null;
    }

    /** Whether {@code read} indexes its tensor with exactly the variables {@code first, second}. */
    private static boolean reads(TensorRead read, IterVar first, IterVar second) {
        return read.indices().size() == 2
                && read.indices().get(0).equals(first)
                && read.indices().get(1).equals(second);
    }
}
