package dev.kiln.lower;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprRewriter;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Literals;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.StmtRewriter;
import dev.kiln.tir.Store;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Storage flatten: every access goes through a rank-1 view of its buffer's memory. A load or
 * store {@code B[i, j]} becomes {@code B[i * stride0 + j * stride1]} on {@link Buffer#flatView()},
 * and {@code allocate B} allocates that view. Strides are the
 * buffer's own, so a buffer padded by storage_align keeps its padding (its view spans the padded
 * rows). The function's parameters keep their original n-d buffers: a backend binds each
 * argument's memory to {@link Buffer#base()}, which every view shares.
 *
 * <p>All accesses of one buffer use one view object. Accesses that already go through a view are
 * left alone, so the pass is idempotent. Offsets are computed in int32, or in int64 when an index
 * is int64 or the buffer spans more than int32 can address. Buffers need constant shapes and
 * strides ({@link Buffer#flatView()} throws otherwise, naming the buffer).
 */
public final class FlattenBuffers {
    private FlattenBuffers() {}

    public static PrimFunc apply(PrimFunc f) {
        return f.withBody(new Flattener().visit(f.body()));
    }

    private static final class Flattener extends StmtRewriter {
        private final Map<Buffer, Buffer> views = new IdentityHashMap<>();
        private final ExprRewriter exprs = new ExprRewriter() {
            @Override
            public Expr visit(Expr e) {
                Expr x = rewriteChildren(e);
                if (x instanceof BufferLoad l && !l.buffer().isView()) {
                    return new BufferLoad(view(l.buffer()), List.of(offset(l.buffer(), l.indices())));
                }
                return x;
            }
        };

        @Override
        public Stmt visit(Stmt s) {
            Stmt x = rewriteChildren(s);
            return switch (x) {
                case Store st
                when !st.buffer().isView() ->
                    new Store(view(st.buffer()), List.of(offset(st.buffer(), st.indices())), st.value());
                case Allocate a when !a.buffer().isView() -> new Allocate(view(a.buffer()), a.body());
                default -> x;
            };
        }

        @Override
        public Expr visitExpr(Expr e) {
            return exprs.visit(e);
        }

        private Buffer view(Buffer b) {
            return views.computeIfAbsent(b, Buffer::flatView);
        }

        /**
         * {@code sum(index[d] * stride[d])}, with constant indices folded into one constant term,
         * zero terms dropped and unit strides not multiplied. The rest of the arithmetic is left
         * to the simplify pass that follows in the pipeline, which knows the loop ranges.
         */
        private Expr offset(Buffer b, List<Expr> indices) {
            long[] strides = b.constStrides();
            long span = ((IntImm) view(b).shape().get(0)).value();
            boolean wide = span > Integer.MAX_VALUE || indices.stream().anyMatch(i -> i.dtype() == DType.INT64);
            DType t = wide ? DType.INT64 : DType.INT32;
            Expr sum = null;
            long constant = 0;
            for (int d = 0; d < indices.size(); d++) {
                Expr idx = indices.get(d);
                if (idx instanceof IntImm c) {
                    constant = Math.addExact(constant, Math.multiplyExact(c.value(), strides[d]));
                    continue;
                }
                idx = idx.cast(t);
                Expr term = strides[d] == 1 ? idx : idx.mul(Literals.of(t, strides[d]));
                sum = sum == null ? term : sum.add(term);
            }
            if (sum == null) return Literals.of(t, constant);
            return constant == 0 ? sum : sum.add(Literals.of(t, constant));
        }
    }
}
