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
import dev.kiln.te.AxisNames;
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
 * {@code C[..., i, j] = sum_k acc(A[..., i, k]) * acc(B[..., k, j])} (or {@code B[..., j, k]}, a dense layer; the
 * leading indices batch axes of C, B's possibly fewer than A's: a weight shared by the batch) with uint8 x int8
 * operands and int32 sums, or bfloat16 x bfloat16 with float32 sums, is rewritten to read B packed as
 * {@code [..., N/16, K/g, 16, g]} ({@link LowPrecision#packMatmulWeight}'s layout per batch: a {@code layout_pack}
 * stage in the program, or folded out of it when B is layout-free) with {@link LowPrecision#matmulPacked}'s body,
 * which the search's {@link MultiLevelTilingTensorize} tiles onto {@code vpdpbusd} / {@code vdpbf16ps} (or AMX's
 * tiles where enabled). {@link AutoSchedule#task} applies it, so {@code AutoSchedule.tune} runs such a computation
 * on the instructions with no hint from the user, as TVM's alter-layout pass packs a VNNI dense's weight; the
 * computation's arguments (names, order, shapes) and every other stage stay as declared, and the rewritten stage
 * keeps its name and axis names.
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

    /**
     * A plain low-precision matmul stage: its reads of A and B, B's batch indices (those before its last two, output
     * axes of the stage), {@code dense} when B's last two are {@code [j, k]}.
     */
    private record Product(ComputeOp op, TensorRead a, TensorRead b, int batch, boolean dense, String intrinsic) {
        Tensor ta() {
            return Tensor.of(a);
        }

        Tensor tb() {
            return Tensor.of(b);
        }

        long n() {
            return op.output(0).dim(op.axes().size() - 1);
        }

        IterVar k() {
            return ((Reduce) op.bodies().getFirst()).axes().getFirst();
        }
    }

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
                Tensor b = map.getOrDefault(p.tb(), p.tb());
                Tensor packed = packs.computeIfAbsent(b, t -> pack(t, p));
                Tensor x = map.getOrDefault(p.ta(), p.ta());
                if (p.n() % LowPrecision.LANES == 0) {
                    map.put(c.output(0), packedProduct(c.name(), p, x, packed));
                } else { // the product on whole blocks of 16 columns (B's padded with zeros), then the user's N
                    Tensor wide = packedProduct(c.name() + "_padded", p, x, packed);
                    Shape shape = c.output(0).shape();
                    map.put(c.output(0), Te.computeN(c.name(), "", shape, names(c), idx -> wide.at(idx)));
                }
                done.add(c.name());
                continue;
            }
            if (why != null) {
                notes.add("stage '" + c.name() + "' (" + lower(p.ta().dtype()) + " x " + lower(p.tb().dtype())
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

    private static AxisNames names(ComputeOp c) {
        return new AxisNames(c.axes().stream().map(IterVar::name).toList());
    }

    /** Why {@code p} cannot run on the instruction its types ask for, or null when it can. */
    private static String refusal(Product p, Target target, Set<String> offered) {
        if (!offered.contains(p.intrinsic())) {
            String why = TensorIntrinsics.get(p.intrinsic()).unavailableReason(target);
            return why != null
                    ? why
                    : "no backend for target " + target + " implements intrinsic '" + p.intrinsic() + "'";
        }
        int g = LowPrecision.group(p.ta().dtype());
        long k = p.k().extent();
        if (k % g != 0) return "its reduction of " + k + " is not a multiple of " + g + " (what one lane sums)";
        return null;
    }

    /**
     * B {@code [..., K, N]} (or {@code [..., N, K]}) packed as {@code [..., ceil(N/16), K/g, 16, g]}: {@code
     * packed[..., a, q, c, d] = B[..., g q + d, 16 a + c]}, zero where {@code 16 a + c} is past N.
     */
    private static Tensor pack(Tensor b, Product p) {
        int g = LowPrecision.group(b.dtype());
        long lanes = LowPrecision.LANES, n = p.n(), k = p.k().extent();
        long blocks = (n + lanes - 1) / lanes;
        int batch = p.batch();
        List<Long> dims = new ArrayList<>();
        for (int t = 0; t < batch; t++) dims.add(b.dim(t));
        dims.addAll(List.of(blocks, k / g, lanes, (long) g));
        return Te.computeN("packed_" + b.name(), PackFolding.PACK_TAG, new Shape(dims), i -> {
            Expr col = i.get(batch).mul(lanes).add(i.get(batch + 2)),
                    row = i.get(batch + 1).mul(g).add(i.get(batch + 3));
            List<Expr> at = new ArrayList<>(i.subList(0, batch));
            at.addAll(p.dense() ? List.of(col, row) : List.of(row, col));
            Expr read = b.at(at);
            return n % lanes == 0 ? read : Te.select(col.lt(n), read, Literals.of(b.dtype(), 0L));
        });
    }

    /**
     * {@link LowPrecision#matmulPacked}'s body with {@code p}'s axes: {@code out[..., j] = sum_k acc(A[...]) *
     * acc(packed[..., j/16, k/g, j%16, k%g])}, j over whole blocks of 16, named {@code name}.
     */
    private static Tensor packedProduct(String name, Product p, Tensor x, Tensor packed) {
        ComputeOp c = p.op();
        int rank = c.axes().size(), g = LowPrecision.group(p.ta().dtype());
        long lanes = LowPrecision.LANES;
        List<Long> dims = new ArrayList<>(c.output(0).shape().dims());
        dims.set(rank - 1, packed.dim(p.batch()) * lanes);
        DType acc = ((Reduce) c.bodies().getFirst()).dtype();
        return Te.computeN(name, "matmul", new Shape(dims), names(c), idx -> {
            IterVar r = Te.reduceAxis(p.k().extent(), p.k().name());
            Map<IterVar, Expr> sub = new IdentityHashMap<>();
            for (int t = 0; t < rank; t++) sub.put(c.axes().get(t), idx.get(t));
            sub.put(p.k(), r);
            List<Expr> aAt =
                    p.a().indices().stream().map(e -> sub.get((IterVar) e)).toList();
            List<Expr> wAt = new ArrayList<>();
            for (int t = 0; t < p.batch(); t++)
                wAt.add(sub.get((IterVar) p.b().indices().get(t)));
            IterVar j = idx.get(rank - 1);
            wAt.addAll(List.of(j.floordiv(lanes), r.floordiv(g), j.floormod(lanes), r.floormod(g)));
            return Te.sum(r, x.at(aAt).cast(acc).mul(packed.at(wAt).cast(acc)));
        });
    }

    /** The plain uint8 x int8 -> int32 or bfloat16 -> float32 matmul {@code c} computes, or null. */
    private static Product product(ComputeOp c) {
        int rank = c.axes().size();
        if (c.outputs().size() != 1 || rank < 2 || c.bodies().size() != 1) return null;
        if (!(c.bodies().getFirst() instanceof Reduce r)) return null;
        if (!r.reducer().name().equals("sum")
                || r.sources().size() != 1
                || r.axes().size() != 1) return null;
        if (!(r.condition() instanceof IntImm one) || one.value() != 1) return null;
        if (!(r.sources().getFirst() instanceof Binary mul) || mul.op() != BinaryOp.MUL) return null;
        IterVar j = c.axes().get(rank - 1), k = r.axes().getFirst();
        TensorRead a = castRead(mul.a(), r.dtype()), b = castRead(mul.b(), r.dtype());
        if (a == null || b == null) return null;
        if (!readsA(a, c, k)) { // B * A: the same product (the rewrite then refuses it by the argument order)
            TensorRead t = a;
            a = b;
            b = t;
        }
        if (!readsA(a, c, k)) return null;
        List<Expr> bi = b.indices();
        int batch = bi.size() - 2;
        if (batch < 0 || !distinctAxes(bi.subList(0, batch), c, j)) return null;
        Expr last2 = bi.get(batch), last = bi.get(batch + 1);
        boolean dense = last2.equals(j) && last.equals(k);
        if (!dense && !(last2.equals(k) && last.equals(j))) return null;
        DType ta = Tensor.of(a).dtype(), tb = Tensor.of(b).dtype();
        String intrinsic;
        if (ta == DType.UINT8 && tb == DType.INT8 && r.dtype() == DType.INT32) {
            intrinsic = TensorIntrinsics.VNNI_U8S8;
        } else if (ta == DType.BFLOAT16 && tb == DType.BFLOAT16 && r.dtype() == DType.FLOAT32) {
            intrinsic = TensorIntrinsics.BF16_DOT;
        } else {
            return null;
        }
        return new Product(c, a, b, batch, dense, intrinsic);
    }

    /** Whether {@code a} reads A at output axes of {@code c} other than its last (each once), then {@code k}. */
    private static boolean readsA(TensorRead a, ComputeOp c, IterVar k) {
        List<Expr> ix = a.indices();
        return ix.size() >= 2
                && ix.getLast().equals(k)
                && distinctAxes(ix.subList(0, ix.size() - 1), c, c.axes().getLast());
    }

    /** Whether {@code ix} are distinct output axes of {@code c}, none of them {@code j}. */
    private static boolean distinctAxes(List<Expr> ix, ComputeOp c, IterVar j) {
        Set<Expr> seen = new java.util.HashSet<>();
        for (Expr e : ix) {
            if (!(e instanceof IterVar v) || v.equals(j) || !c.axes().contains(v) || !seen.add(v)) return false;
        }
        return true;
    }

    /** The tensor read inside {@code e} when {@code e} is that read cast to {@code acc}, else null. */
    private static TensorRead castRead(Expr e, DType acc) {
        return e instanceof Cast cast && cast.dtype() == acc && cast.value() instanceof TensorRead t ? t : null;
    }
}
