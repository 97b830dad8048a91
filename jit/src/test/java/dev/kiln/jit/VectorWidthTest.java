package dev.kiln.jit;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Vectorized loops whose extent is not a power of two are generated as one body per power of two of
 * it (24 lanes: 16 then 8), never as a {@code <24 x float>}: LLVM's x86 code for such vectors
 * carried around a loop is per-element inserts and spills (a register tile of a 24-channel 1x1 conv
 * ran 16 times slower, docs/PERFORMANCE.md). Each case matches the interpreter.
 */
class VectorWidthTest {
    private static final DType F32 = DType.FLOAT32;
    private static final Pattern VECTOR = Pattern.compile("<(\\d+) x (float|i32|i1|i64)>");

    private static Expr i(long v) {
        return IntImm.i32(v);
    }

    /** The lane counts of every vector type in the generated IR. */
    private static List<Integer> widths(String ir) {
        Matcher m = VECTOR.matcher(ir);
        java.util.ArrayList<Integer> w = new java.util.ArrayList<>();
        while (m.find()) w.add(Integer.parseInt(m.group(1)));
        return w;
    }

    /**
     * A register tile as the search writes it: rows unrolled, the reduction loop around them, the
     * channel loop vectorized innermost; {@code C[r, l] += A[r, k] * B[k, l]} for 8 rows and 36 k.
     */
    @ParameterizedTest
    @ValueSource(ints = {3, 6, 12, 20, 24, 40, 48, 56, 63, 72, 100})
    void aRegisterTileOfAnyWidthUsesPowerOfTwoVectorsAndMatchesTheInterpreter(int lanes) {
        Var r = new Var("r"), k = new Var("k"), l = new Var("l"), r0 = new Var("r0"), l0 = new Var("l0");
        int rows = 8, depth = 36;
        Buffer a = buf("A", F32, rows, depth), b = buf("B", F32, depth, lanes), c = buf("C", F32, rows, lanes);
        Stmt init = loop(
                r0,
                rows,
                ForKind.SERIAL,
                loop(l0, lanes, ForKind.VECTORIZED, store(c, dev.kiln.ir.FloatImm.f32(0), r0, l0)));
        Stmt update = store(c, load(c, r, l).add(load(a, r, k).mul(load(b, k, l))), r, l);
        Stmt tile = loop(
                k, depth, ForKind.SERIAL, loop(r, rows, ForKind.UNROLLED, loop(l, lanes, ForKind.VECTORIZED, update)));
        PrimFunc fn = new PrimFunc("tile" + lanes, List.of(a, b, c), Seq.of(init, tile));
        JitCheck.matches(fn, 7, 1e-5, 1e-5);
        try (LlvmKernel kernel = JitCheck.BACKEND.compile(fn, JitCheck.TARGET)) {
            List<Integer> w = widths(kernel.generatedIr());
            assertThat(w).as("vector widths of a %d-lane loop", lanes).isNotEmpty();
            assertThat(w).as("vector widths of a %d-lane loop", lanes).allMatch(n -> Integer.bitCount(n) == 1);
            assertThat(w).as("its widest piece").contains(Math.min(64, Integer.highestOneBit(lanes)));
        }
    }

    /** A lane-linear loop variable with a non-zero start keeps its values across the pieces. */
    @ParameterizedTest
    @ValueSource(ints = {5, 24, 44})
    void theLoopVariableRunsOnAcrossThePieces(int lanes) {
        Var j = new Var("j"), o = new Var("o");
        Buffer a = buf("A", F32, 4, lanes + 3), b = buf("B", F32, 4, lanes + 3);
        Stmt body = store(b, load(a, o, j).mul(j.cast(F32)).add(o.cast(F32)), o, j);
        For vj = new For(j, i(3), i(lanes), ForKind.VECTORIZED, null, body); // j in [3, 3 + lanes)
        PrimFunc fn = new PrimFunc("lin" + lanes, List.of(a, b), loop(o, 4, ForKind.SERIAL, vj));
        JitCheck.exact(fn, 3);
    }
}
