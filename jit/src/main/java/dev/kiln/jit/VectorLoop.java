package dev.kiln.jit;

import dev.kiln.ir.DType;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.tir.For;
import java.util.Optional;

/**
 * A vectorized loop of constant extent E becomes vector code by construction: the body is
 * generated with {@code <W x T>} values, the loop variable being lane-linear
 * ({@code min + base + lane}). Loops longer than {@link JitOptions#maxLanes()} run a serial loop
 * over chunks of that many lanes; what is left (or the whole loop when it is shorter) is generated
 * as one body per power of two of its extent, widest first: 24 lanes are a {@code <16 x T>} body
 * and an {@code <8 x T>} one.
 *
 * <p>Why powers of two: LLVM legalises a vector of another width ({@code <24 x float>}) by
 * widening and splitting it, and where such a vector is carried around a loop (a register tile's
 * accumulators promoted out of its reduction loop) its x86 code generation falls apart into
 * per-element inserts and stack spills: a 1x1 conv with 24 output channels of MobileNet-V2 ran 16
 * times slower with its reduction inside the register tile than outside it, which kept the search
 * away from the register-resident tiles of such layers (docs/PERFORMANCE.md, "Vector widths that
 * are not powers of two"). Each power-of-two piece is a legal vector or a whole number of them.
 */
final class VectorLoop {
    private VectorLoop() {}

    private static final System.Logger LOG = System.getLogger(VectorLoop.class.getName());

    static void gen(CodeGen g, For f) {
        if (!(f.extent() instanceof IntImm e)) {
            throw new KilnException("function '" + g.funcName + "': vectorized loop '"
                    + f.var().name() + "' needs a constant extent, got " + ExprPrinter.print(f.extent()));
        }
        Optional<String> why = VectorLegality.check(f);
        if (why.isPresent()) {
            String msg = "vectorized loop '" + f.var().name() + "' of function '" + g.funcName
                    + "' is generated as a serial loop: " + why.get();
            g.mod.note(msg);
            LOG.log(System.Logger.Level.INFO, msg);
            StmtGen.serial(g, f);
            return;
        }
        long extent = e.value();
        if (extent <= 0) return;
        DType t = f.var().dtype();
        String ty = IrTypes.reg(t);
        Val min = ExprGen.gen(g, f.min());
        int w = (int) Math.min(extent, g.options.maxLanes());
        long chunks = extent / w, rem = extent % w;
        if (chunks == 1 && Long.bitCount(w) != 1) {
            chunks = 0; // one body of a width that is not a power of two: all of it split below
            rem = extent;
        }
        if (chunks == 1) {
            chunk(g, f, min.ref(), w);
        } else if (chunks > 1) {
            // for c in [0, chunks): the chunk starting at min + c * w
            String pre = g.fn.currentBlock();
            String header = g.fn.label("vloop"), body = g.fn.label("vbody"), exit = g.fn.label("vexit");
            g.fn.br(header);
            g.fn.block(header);
            String c = g.fn.tmp(), next = g.fn.tmp();
            String latchName = g.fn.label("vlatch");
            g.fn.line(c + " = phi i64 [ 0, %" + pre + " ], [ " + next + ", %" + latchName + " ]");
            String more = g.fn.emit("icmp slt i64 " + c + ", " + chunks);
            g.fn.condBr(more, body, exit);
            g.fn.block(body);
            String off = g.fn.emit("mul nsw i64 " + c + ", " + w);
            String offT = t == DType.INT64 ? off : g.fn.emit("trunc i64 " + off + " to " + ty);
            String base = g.fn.emit("add nsw " + ty + " " + min.ref() + ", " + offT);
            chunk(g, f, base, w);
            g.fn.br(latchName);
            g.fn.block(latchName);
            g.fn.line(next + " = add nsw i64 " + c + ", 1");
            g.fn.br(header);
            g.fn.block(exit);
        }
        long done = chunks * w;
        while (rem > 0) {
            long piece = Long.highestOneBit(rem);
            String base = done == 0
                    ? min.ref()
                    : min.isLiteral()
                            ? IrTypes.intConst(t, Long.parseLong(min.ref()) + done)
                            : g.fn.emit("add nsw " + ty + " " + min.ref() + ", " + IrTypes.intConst(t, done));
            chunk(g, f, base, (int) piece);
            done += piece;
            rem -= piece;
        }
    }

    /** The body over {@code n} lanes with the loop variable {@code base + lane}. */
    private static void chunk(CodeGen g, For f, String base, int n) {
        int savedLanes = g.lanes;
        Val savedMask = g.mask;
        g.lanes = n;
        g.mask = null;
        try {
            Val v = n == 1
                    ? Val.uniform(base, f.var().dtype())
                    : Val.linear(base, 1, f.var().dtype());
            StmtGen.bind(g, f.var(), v, () -> StmtGen.gen(g, f.body()));
        } finally {
            g.lanes = savedLanes;
            g.mask = savedMask;
        }
    }
}
