package dev.kiln.cuda.codegen;

import dev.kiln.arith.Simplifier;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Var;
import dev.kiln.lower.GpuKernel;
import dev.kiln.schedule.CudaTensorIntrinsics;
import dev.kiln.schedule.TensorIntrinsic;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.schedule.TensorizedNest;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.StmtVisitor;
import dev.kiln.tir.Stmts;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The CUDA implementations of the Tensor Core intrinsics ({@link CudaTensorIntrinsics}), keyed by
 * name: a {@code tensorize$cuda.wmma...} nest (i, j, k loops of 16, k of 8 for TF32, around one accumulating store,
 * as the tensorize step checked it) becomes {@code nvcuda::wmma} fragment loads of A, B and the
 * accumulator C, one {@code mma_sync} and the accumulator's store, each operand read from the
 * nest's first element with its leading dimension (the distance of its rows, a constant of the
 * buffer's layout), between {@code __syncwarp()}s so that the lanes' plain stores and the
 * fragment's are visible to each other.
 *
 * <p>wmma is collective over a warp, so a kernel with a Tensor Core nest is <em>warp-level</em>:
 * each of the program's threads along {@code threadIdx.x} is a warp of 32 lanes (the launch's x
 * extent is 32 times the bindings', and the program's thread index is {@code threadIdx.x >> 5}).
 * The lanes of a warp run the rest of the kernel redundantly: stores of the same values, which is
 * correct; an accumulating store outside a Tensor Core nest would be applied 32 times, so such a
 * kernel is refused. C must live in shared or global memory (a fragment is stored to memory).
 */
final class WmmaGen {
    private WmmaGen() {}

    /** Lanes per program thread in a warp-level kernel. */
    static final int LANES = 32;

    /** Whether {@code kernel} holds a Tensor Core nest (and so runs a warp per program thread). */
    static boolean warpLevel(GpuKernel kernel) {
        boolean[] found = {false};
        new StmtVisitor() {
            @Override
            public void visit(Stmt s) {
                if (s instanceof Pragma p
                        && p.tensorIntrinsic() != null
                        && CudaTensorIntrinsics.ALL.contains(p.tensorIntrinsic())) found[0] = true;
                visitChildren(s);
            }
        }.visit(kernel.root());
        return found[0];
    }

    /**
     * Refuses a warp-level kernel whose lanes would not agree: an accumulating store outside a
     * Tensor Core nest, or more than the block's thread limit once every program thread is a warp.
     */
    static void checkWarpLevel(GpuKernel kernel, String where) {
        long threads = kernel.threadsPerBlock() * LANES;
        if (threads > 1024) {
            throw new KilnException(where + ": a Tensor Core kernel runs a warp per thread; "
                    + kernel.threadsPerBlock() + " threads per block make " + threads
                    + " lanes, over CUDA's 1024 (bind at most 32 threads per block)");
        }
        new StmtVisitor() {
            @Override
            public void visit(Stmt s) {
                if (s instanceof Pragma p && p.tensorIntrinsic() != null) return;
                if (s instanceof Store st) {
                    Exprs.forEach(st.value(), e -> {
                        if (e instanceof BufferLoad l
                                && l.buffer().base() == st.buffer().base()) {
                            throw new KilnException(
                                    where + ": the store to '" + st.buffer().name()
                                            + "' accumulates outside the Tensor Core nest, which each of a"
                                            + " warp's 32 lanes would repeat; tensorize that reduction too or"
                                            + " compute it in another kernel");
                        }
                    });
                }
                visitChildren(s);
            }
        }.visit(kernel.root());
    }

    /**
     * One Tensor Core nest as the tensorize step left it: its accumulating store, the store and
     * operand loads at the tile's first elements, the operands' leading dimensions.
     */
    record Nest(
            String name,
            Store store,
            Store at0,
            List<BufferLoad> loads,
            DType inType,
            boolean bT,
            long lda,
            long ldb,
            long ldc,
            int depth) {
        /** The fragments' {@code m, n, k}: {@code 16, 16, depth}. */
        String shape() {
            return "16, 16, " + depth;
        }

        /** The A and B fragments' element type: the inputs' type, or {@code precision::tf32} for float32. */
        String fragmentType() {
            return inType == DType.FLOAT32 ? NS + "precision::tf32" : CudaTypes.name(inType);
        }

        Buffer c() {
            return store.buffer();
        }
    }

    /** Reads the nest under {@code p}, or throws naming the intrinsic and why it cannot be written. */
    static Nest parse(Pragma p, String where0) {
        String name = p.tensorIntrinsic();
        String where = where0 + ": tensor intrinsic '" + name + "'";
        if (!CudaTensorIntrinsics.ALL.contains(name)) {
            throw new KilnException(
                    where + " has no CUDA implementation; the CUDA backend implements " + CudaTensorIntrinsics.ALL);
        }
        TensorIntrinsic in = TensorIntrinsics.get(name);
        TensorizedNest nest = TensorizedNest.read(p, in, where);
        List<For> loops = nest.loops();
        Store st = nest.store();
        Var vi = loops.get(0).var(), vj = loops.get(1).var(), vk = loops.get(2).var();
        Map<Var, Expr> zeros = new HashMap<>();
        for (For f : loops) zeros.put(f.var(), new IntImm(f.var().dtype(), 0));
        Store at0 = substitute(st, zeros); // the tile's first elements
        List<BufferLoad> loads = inputs(at0);
        if (loads.size() != 2) throw new KilnException(where + ": the nest reads " + loads.size() + " operands, not 2");
        DType inType = CudaTensorIntrinsics.inputType(name);
        Buffer a = loads.get(0).buffer(), b = loads.get(1).buffer(), c = st.buffer();
        if (a.dtype() != inType || b.dtype() != inType || c.dtype() != DType.FLOAT32) {
            throw new KilnException(where + ": operands " + a.name() + " " + a.dtype() + ", " + b.name() + " "
                    + b.dtype() + ", " + c.name() + " " + c.dtype() + "; the intrinsic takes " + inType + ", " + inType
                    + ", FLOAT32");
        }
        if (c.scope() == MemoryScope.LOCAL) {
            throw new KilnException(where + ": the accumulator '" + c.name() + "' is a thread's local array; a"
                    + " fragment is stored to shared or global memory (cache_write it to 'shared', or not at all)");
        }
        boolean bT = CudaTensorIntrinsics.bTransposed(name);
        long lda = stride(st, 0, vi, where, "A"), ldb = stride(st, 1, bT ? vj : vk, where, "B");
        long ldc = stride(st, -1, vi, where, "C");
        int perRow = 16 / inType.bytes(); // ldm: a multiple of 16 bytes
        check(where, "A", lda, perRow);
        check(where, "B", ldb, perRow);
        check(where, "C", ldc, 4);
        return new Nest(
                name,
                st,
                at0,
                loads,
                inType,
                bT,
                lda,
                ldb,
                ldc,
                in.loopExtents().get(2).intValue());
    }

    /**
     * Writes the nest under {@code p} as wmma calls, or throws naming the intrinsic and why not.
     * With {@code acc} holding this nest, the accumulator is the warp's fragment {@code acc} keeps
     * across its loop; otherwise it is loaded from C and stored back around the one mma_sync.
     */
    static void emit(Pragma p, WmmaAccumulators acc, ExprGen g, CudaNames names, String where0, Consumer<String> line) {
        Nest n = parse(p, where0);
        String t = n.fragmentType();
        g.dtypes.add(n.inType());
        Buffer a = n.loads().get(0).buffer(), b = n.loads().get(1).buffer(), c = n.c();
        Expr slot = acc == null ? null : acc.slot(p);
        boolean kept = slot != null;
        line.accept("// " + p.key() + ": one warp's 16x16x" + n.depth() + " Tensor Core tile"
                + (kept ? ", accumulating in fragment registers" : ""));
        line.accept("{");
        line.accept("  __syncwarp();");
        line.accept(
                "  " + NS + "fragment<" + NS + "matrix_a, " + n.shape() + ", " + t + ", " + NS + "row_major> kiln_fa;");
        line.accept("  " + NS + "fragment<" + NS + "matrix_b, " + n.shape() + ", " + t + ", " + NS
                + (n.bT() ? "col_major" : "row_major") + "> kiln_fb;");
        String pa = "&" + names.buffer(a) + "[" + g.offset(a, n.loads().get(0).indices()) + "]";
        String pb = "&" + names.buffer(b) + "[" + g.offset(b, n.loads().get(1).indices()) + "]";
        line.accept("  " + NS + "load_matrix_sync(kiln_fa, " + pa + ", " + n.lda() + ");");
        line.accept("  " + NS + "load_matrix_sync(kiln_fb, " + pb + ", " + n.ldb() + ");");
        if (n.inType() == DType.FLOAT32) {
            // the fragments hold float32 values; the Tensor Cores take them rounded to TF32
            for (String f : List.of("kiln_fa", "kiln_fb")) {
                line.accept("  for (int kiln_t = 0; kiln_t < " + f + ".num_elements; ++kiln_t) " + f + ".x[kiln_t] = "
                        + NS + "__float_to_tf32(" + f + ".x[kiln_t]);");
            }
        }
        if (kept) {
            String f = WmmaAccumulators.ARRAY + "[" + g.index(slot) + "]";
            line.accept("  " + NS + "mma_sync(" + f + ", kiln_fa, kiln_fb, " + f + ");");
        } else {
            String pc = "&" + names.buffer(c) + "[" + g.offset(c, n.at0().indices()) + "]";
            line.accept("  " + NS + "fragment<" + NS + "accumulator, " + n.shape() + ", float> kiln_fc;");
            line.accept("  " + NS + "load_matrix_sync(kiln_fc, " + pc + ", " + n.ldc() + ", " + NS + "mem_row_major);");
            line.accept("  " + NS + "mma_sync(kiln_fc, kiln_fa, kiln_fb, kiln_fc);");
            line.accept(
                    "  " + NS + "store_matrix_sync(" + pc + ", kiln_fc, " + n.ldc() + ", " + NS + "mem_row_major);");
        }
        line.accept("  __syncwarp();");
        line.accept("}");
    }

    static final String NS = "nvcuda::wmma::";
    /**
     * Whether the iterations of {@code loop}, in a warp-level kernel, can be shared among the warp's
     * 32 lanes instead of every lane running all of them: a serial or unrolled loop whose body
     * stores to one shared or global buffer (a cooperative fetch, say, or a fused epilogue writing
     * the warp's tiles of the result) and does nothing else but loops,
     * conditions and lets: one store statement, whose value and conditions read no element of the
     * buffer, no barrier, no Tensor Core nest, no allocation. Such a store belongs to a stage that
     * is not a reduction, whose loops write each element of it once, so the iterations are
     * independent; the lanes' stores are made visible to the whole warp by a {@code __syncwarp()}
     * after the loop, since the rest of the kernel reads them redundantly.
     */
    static boolean laneSplit(For loop) {
        if (loop.kind() != ForKind.SERIAL && loop.kind() != ForKind.UNROLLED) return false;
        List<Store> stores = new ArrayList<>();
        boolean[] other = {false};
        Stmts.forEachStmt(loop.body(), x -> {
            switch (x) {
                case Store st -> stores.add(st);
                case For f -> {}
                case IfThenElse i -> {}
                case Let l -> {}
                case Seq q -> {}
                default -> other[0] = true; // a barrier, a pragma, an allocation, an evaluation
            }
        });
        if (other[0] || stores.size() != 1) return false;
        Buffer dst = stores.getFirst().buffer();
        if (dst.scope() == MemoryScope.LOCAL) return false;
        boolean[] reads = {false};
        Stmts.forEachExprNode(loop.body(), e -> {
            if (e instanceof BufferLoad l && l.buffer().base() == dst.base()) reads[0] = true;
        });
        return !reads[0];
    }

    private static void check(String where, String operand, long ld, int multiple) {
        if (ld <= 0 || ld % multiple != 0) {
            throw new KilnException(where + ": operand " + operand + "'s rows are " + ld
                    + " elements apart; wmma needs a positive multiple of " + multiple + " (16 bytes)");
        }
    }

    /** The store with {@code map}'s variables replaced (the nest's loop variables stay as they are). */
    static Store substitute(Store st, Map<Var, Expr> map) {
        return (Store) Stmts.substitute(st, map);
    }

    private static List<BufferLoad> inputs(Store st) {
        List<BufferLoad> out = new ArrayList<>();
        Exprs.forEach(st.value(), e -> {
            if (e instanceof BufferLoad l && l.buffer().base() != st.buffer().base()) out.add(l);
        });
        return out;
    }

    /** How many elements apart operand {@code which} (0: A, 1: B, -1: the store) is when {@code v} grows by one. */
    private static long stride(Store st, int which, Var v, String where, String operand) {
        Map<Var, Expr> one = new HashMap<>();
        one.put(v, new IntImm(v.dtype(), 1));
        Map<Var, Expr> zero = new HashMap<>();
        zero.put(v, new IntImm(v.dtype(), 0));
        Expr d = flat(pick(substitute(st, one), which)).sub(flat(pick(substitute(st, zero), which)));
        Expr r = new Simplifier().simplify(d);
        if (!(r instanceof IntImm c)) {
            throw new KilnException(where + ": operand " + operand + "'s leading dimension is not a constant: "
                    + dev.kiln.ir.ExprPrinter.print(r));
        }
        return c.value();
    }

    private static BufferLoad pick(Store st, int which) {
        return which < 0
                ? new BufferLoad(st.buffer(), st.indices())
                : inputs(st).get(which);
    }

    static Expr flat(BufferLoad l) {
        List<Expr> strides = l.buffer().strides();
        Expr off = null;
        for (int d = 0; d < l.indices().size(); d++) {
            Expr idx = l.indices().get(d);
            Expr stride = strides.get(d).dtype() == idx.dtype()
                    ? strides.get(d)
                    : strides.get(d).cast(idx.dtype());
            Expr term = idx.mul(stride);
            off = off == null ? term : off.add(term);
        }
        return off;
    }
}
