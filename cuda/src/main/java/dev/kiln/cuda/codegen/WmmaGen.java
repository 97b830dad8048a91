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
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.Pragma;
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
 * name: a {@code tensorize$cuda.wmma...} nest (i, j, k loops of 16 around one accumulating store,
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

    /** Writes the nest under {@code p} as wmma calls, or throws naming the intrinsic and why not. */
    static void emit(Pragma p, ExprGen g, CudaNames names, String where0, Consumer<String> line) {
        String name = p.tensorIntrinsic();
        String where = where0 + ": tensor intrinsic '" + name + "'";
        if (!CudaTensorIntrinsics.ALL.contains(name)) {
            throw new KilnException(
                    where + " has no CUDA implementation; the CUDA backend implements " + CudaTensorIntrinsics.ALL);
        }
        TensorIntrinsic in = TensorIntrinsics.get(name);
        List<Long> ext = in.loopExtents();
        List<For> loops = new ArrayList<>();
        Stmt s = p.body();
        while (s instanceof For f) {
            if (f.kind() != ForKind.SERIAL || !(f.extent() instanceof IntImm e) || e.value() != ext.get(loops.size())) {
                throw new KilnException(where + ": loop '" + f.var().name() + "' is not the pattern's loop "
                        + loops.size() + " (extent " + ext.get(loops.size()) + ", serial)");
            }
            loops.add(f);
            if (loops.size() == ext.size()) break;
            s = f.body();
        }
        if (loops.size() != ext.size() || !(loops.getLast().body() instanceof Store st)) {
            throw new KilnException(where + ": the nest is not " + ext.size() + " loops around one store");
        }
        Var vi = loops.get(0).var(), vj = loops.get(1).var(), vk = loops.get(2).var();
        Map<Var, Expr> zeros = new HashMap<>();
        for (For f : loops) zeros.put(f.var(), new IntImm(f.var().dtype(), 0));
        Store at0 = substitute(st, zeros); // the tile's first elements
        List<BufferLoad> loads = inputs(at0);
        if (loads.size() != 2) throw new KilnException(where + ": the nest reads " + loads.size() + " operands, not 2");
        DType inType = name.contains(".f16") ? DType.FLOAT16 : DType.BFLOAT16;
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
        check(where, "A", lda, 8);
        check(where, "B", ldb, 8);
        check(where, "C", ldc, 4);
        String t = CudaTypes.name(inType);
        String ns = "nvcuda::wmma::";
        g.dtypes.add(inType);
        line.accept("// " + p.key() + ": one warp's 16x16x16 Tensor Core tile");
        line.accept("{");
        line.accept("  __syncwarp();");
        line.accept("  " + ns + "fragment<" + ns + "matrix_a, 16, 16, 16, " + t + ", " + ns + "row_major> kiln_fa;");
        line.accept("  " + ns + "fragment<" + ns + "matrix_b, 16, 16, 16, " + t + ", " + ns
                + (bT ? "col_major" : "row_major") + "> kiln_fb;");
        line.accept("  " + ns + "fragment<" + ns + "accumulator, 16, 16, 16, float> kiln_fc;");
        String pa = "&" + names.buffer(a) + "[" + g.offset(a, loads.get(0).indices()) + "]";
        String pb = "&" + names.buffer(b) + "[" + g.offset(b, loads.get(1).indices()) + "]";
        String pc = "&" + names.buffer(c) + "[" + g.offset(c, at0.indices()) + "]";
        line.accept("  " + ns + "load_matrix_sync(kiln_fa, " + pa + ", " + lda + ");");
        line.accept("  " + ns + "load_matrix_sync(kiln_fb, " + pb + ", " + ldb + ");");
        line.accept("  " + ns + "load_matrix_sync(kiln_fc, " + pc + ", " + ldc + ", " + ns + "mem_row_major);");
        line.accept("  " + ns + "mma_sync(kiln_fc, kiln_fa, kiln_fb, kiln_fc);");
        line.accept("  " + ns + "store_matrix_sync(" + pc + ", kiln_fc, " + ldc + ", " + ns + "mem_row_major);");
        line.accept("  __syncwarp();");
        line.accept("}");
    }

    private static void check(String where, String operand, long ld, int multiple) {
        if (ld <= 0 || ld % multiple != 0) {
            throw new KilnException(where + ": operand " + operand + "'s rows are " + ld
                    + " elements apart; wmma needs a positive multiple of " + multiple + " (16 bytes)");
        }
    }

    /** The store with {@code map}'s variables replaced (the nest's loop variables stay as they are). */
    private static Store substitute(Store st, Map<Var, Expr> map) {
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

    private static Expr flat(BufferLoad l) {
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
