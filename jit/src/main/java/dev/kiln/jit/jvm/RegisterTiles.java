package dev.kiln.jit.jvm;

import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import dev.kiln.lower.UnrollLoops;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Stmts;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.List;

/**
 * Unrolls register tiles, as LLVM's full unrolling does for the LLVM backend: a serial loop of constant
 * extent whose body is only vectorized loops of accumulating stores, each row its own accumulators (a
 * tile's rows around its vector chunks, as
 * Ansor's multi-level tiling leaves them: {@code for i.3 { vectorized for j.3 { C[i, j] += ... } }})
 * becomes copies of its body when the whole tile holds at most {@link Promotion#maxVectors} vectors.
 * LLVM unrolls such loops by itself and then keeps the tile in registers; C2 does not unroll a loop
 * around another loop, so without this a tuned program's accumulators stay in memory ({@link Promotion}
 * needs addresses invariant in the loop around the tile, which a row loop's variable is not). Explicitly
 * unrolled loops are left to the lowering pass {@link UnrollLoops}, which already ran.
 *
 * <p>{@code -Dkiln.jvm.unrollTiles=false} turns it off (read at each compile; for A/B measurements).
 */
final class RegisterTiles {
    private RegisterTiles() {}

    /** Most copies a tile's row loop is unrolled into. */
    static final long MAX_ROWS = dev.kiln.target.JvmRegisterTiles.MAX_ROWS;

    static boolean enabled() {
        return !"false".equals(System.getProperty("kiln.jvm.unrollTiles"));
    }

    /** {@code f} with its register tiles' row loops unrolled, or {@code f} itself if it has none. */
    static PrimFunc apply(PrimFunc f, int vectorBits) {
        if (!enabled()) return f;
        RegisterTiles.Marker m = new Marker(vectorBits);
        Stmt body = m.visit(f.body());
        return m.marked == 0 ? f : UnrollLoops.apply(f.withBody(body));
    }

    private static final class Marker {
        final int vectorBits;
        int marked;

        Marker(int vectorBits) {
            this.vectorBits = vectorBits;
        }

        Stmt visit(Stmt s) {
            return switch (s) {
                case For f -> {
                    if (f.kind() == ForKind.SERIAL
                            && f.extent() instanceof IntImm e
                            && e.value() > 1
                            && e.value() <= MAX_ROWS) {
                        long vectors = tileVectors(f.body());
                        if (vectors > 0
                                && accumulatesPerRow(f.body(), f.var())
                                && e.value() * vectors <= Promotion.maxVectors(vectorBits)) {
                            marked++;
                            yield new For(f.var(), f.min(), f.extent(), ForKind.UNROLLED, f.thread(), f.body());
                        }
                    }
                    Stmt b = visit(f.body());
                    yield b == f.body() ? f : f.withBody(b);
                }
                case Seq q -> {
                    List<Stmt> out = new ArrayList<>();
                    boolean changed = false;
                    for (Stmt c : q.stmts()) {
                        Stmt r = visit(c);
                        changed |= r != c;
                        out.add(r);
                    }
                    yield changed ? Seq.of(out) : q;
                }
                case Allocate a -> {
                    Stmt b = visit(a.body());
                    yield b == a.body() ? a : new Allocate(a.buffer(), b);
                }
                case Let l -> {
                    Stmt b = visit(l.body());
                    yield b == l.body() ? l : new Let(l.var(), l.value(), b);
                }
                case Pragma p -> {
                    if (p.tensorIntrinsic() != null) yield p;
                    Stmt b = visit(p.body());
                    yield b == p.body() ? p : new Pragma(p.key(), p.value(), b);
                }
                default -> s;
            };
        }

        /**
         * The vectors a tile body holds: the sum over its vectorized loops (constant extents, stores only)
         * of their vector chunks; 0 if {@code s} is anything else.
         */
        long tileVectors(Stmt s) {
            return switch (s) {
                case For f
                when f.kind() == ForKind.VECTORIZED
                        && f.extent() instanceof IntImm e
                        && Promotion.storesOnly(f.body()) -> {
                    int bits = storeBits(f.body());
                    if (bits <= 0) yield 0;
                    long lanes = Math.max(1, vectorBits / bits);
                    yield (e.value() + lanes - 1) / lanes;
                }
                case Seq q -> {
                    long sum = 0;
                    for (Stmt c : q.stmts()) {
                        long v = tileVectors(c);
                        if (v == 0) yield 0;
                        sum += v;
                    }
                    yield sum;
                }
                default -> 0;
            };
        }

        /**
         * Whether every store in {@code s} accumulates ({@code X[idx] = X[idx] op ...}, the same indices read
         * and written) at indices that use the row variable {@code row}: a tile's rows, each its own
         * accumulators. A reduction loop (the same accumulators in every iteration) is not a row loop, and
         * copies and initialisations are not hot: they stay loops (and perfect nests, for {@link FullWrite}).
         */
        private static boolean accumulatesPerRow(Stmt s, Var row) {
            boolean[] ok = {true};
            Stmts.forEachStmt(s, x -> {
                if (x instanceof Store st) {
                    boolean usesRow = st.indices().stream().anyMatch(e -> Exprs.uses(e, row));
                    boolean[] reads = {false};
                    Exprs.forEach(st.value(), e -> {
                        if (e instanceof BufferLoad l
                                && l.buffer().base() == st.buffer().base()
                                && l.indices().equals(st.indices())) {
                            reads[0] = true;
                        }
                    });
                    if (!usesRow || !reads[0]) ok[0] = false;
                }
            });
            return ok[0];
        }

        private static int storeBits(Stmt s) {
            int[] bits = {0};
            Stmts.forEachStmt(s, x -> {
                if (x instanceof Store st)
                    bits[0] = Math.max(bits[0], st.buffer().dtype().bits());
            });
            return bits[0];
        }
    }
}
