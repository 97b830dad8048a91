package dev.kiln.interp;

import static dev.kiln.interp.Ref.buf;
import static dev.kiln.interp.Ref.i32;
import static dev.kiln.interp.Ref.load;
import static dev.kiln.interp.Ref.store;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.For;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.PrimFunc;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Indices with divisions of one loop variable ({@code floordiv(rc, 4)}, {@code floormod(o, 16)}: a packed layout's)
 * are tabulated over the loop's range ({@code AffineForm} atoms, {@code LeafNodes.Tabulated}); the results are the
 * expressions' own, checked against plain Java, including wrapping, negative operands, a loop that does not start
 * at 0, and an atom that divides by zero at a value the program never reaches.
 */
class InterpreterTabulatedIndexTest {
    @Test
    void aPackedLayoutsIndexReadsTheSameElementsAsPlainJava() {
        // out[o, rc] = in[floordiv(o, 16), floordiv(rc, 4), floormod(o, 16), floormod(rc, 4)], flattened:
        // the 16 x 4 blocks a packed int8 weight is read in; rc runs over [3, 23) to start off 0
        int blocks = 3, kb = 6;
        Buffer in = buf("in", DType.INT32, blocks * kb * 16 * 4);
        Buffer out = buf("out", DType.INT32, blocks * 16, 20);
        Var o = new Var("o"), rc = new Var("rc");
        Expr idx = o.floordiv(16)
                .mul(kb * 64)
                .add(rc.floordiv(4).mul(64))
                .add(o.floormod(16).mul(4))
                .add(rc.floormod(4));
        PrimFunc f = new PrimFunc(
                "pack",
                List.of(in, out),
                For.serial(
                        o,
                        i32(0),
                        i32(blocks * 16),
                        For.serial(rc, i32(3), i32(20), store(out, load(in, idx), o, rc.sub(3)))));
        int[] data = new int[blocks * kb * 64];
        for (int k = 0; k < data.length; k++) data[k] = k * 7 - 1000;
        try (NDArray a = NDArray.fromInts(data, data.length);
                NDArray b = NDArray.allocate(DType.INT32, blocks * 16, 20)) {
            Interpreter.run(f, a, b);
            for (int oo = 0; oo < blocks * 16; oo++) {
                for (int r = 3; r < 23; r++) {
                    int want = data[(oo / 16) * kb * 64 + (r / 4) * 64 + (oo % 16) * 4 + r % 4];
                    assertEquals(want, b.getLong(oo, r - 3), "o=" + oo + " rc=" + r);
                }
            }
        }
    }

    @Test
    void negativeOperandsAndInt32WrappingAreTheExpressionsOwn() {
        // out[i] = i * 1e9 + floordiv(i - 5, 3) * 2e9 + floormod(i - 5, 3) * 7 + min(i, 4), in int32 (wraps)
        int n = 13;
        Buffer out = buf("out", DType.INT32, n);
        Var i = new Var("i");
        Expr v = i.mul(1_000_000_000)
                .add(i.sub(5).floordiv(3).mul(2_000_000_000))
                .add(i.sub(5).floormod(3).mul(7))
                .add(i.min(i32(4)));
        PrimFunc f = new PrimFunc("wrap", List.of(out), For.serial(i, i32(0), i32(n), store(out, v, i)));
        try (NDArray b = NDArray.allocate(DType.INT32, n)) {
            Interpreter.run(f, b);
            for (int k = 0; k < n; k++) {
                int want = k * 1_000_000_000
                        + Math.floorDiv(k - 5, 3) * 2_000_000_000
                        + Math.floorMod(k - 5, 3) * 7
                        + Math.min(k, 4);
                assertEquals(want, b.getLong(k), "i=" + k);
            }
        }
    }

    @Test
    void anAtomThatDividesByZeroWhereTheProgramNeverGoesIsNotTabulatedAndStillFails() {
        int n = 8;
        Buffer out = buf("out", DType.INT32, n);
        Var i = new Var("i");
        Expr v = i.mul(10).floordiv(i.sub(3));
        PrimFunc guarded = new PrimFunc(
                "guarded",
                List.of(out),
                For.serial(i, i32(0), i32(n), IfThenElse.of(i.ne(3), store(out, v.add(i.mul(2)), i))));
        try (NDArray b = NDArray.allocate(DType.INT32, n)) {
            Interpreter.run(guarded, b);
            for (int k = 0; k < n; k++)
                assertEquals(k == 3 ? 0 : Math.floorDiv(k * 10, k - 3) + 2 * k, b.getLong(k), "i=" + k);
        }
        PrimFunc unguarded =
                new PrimFunc("unguarded", List.of(out), For.serial(i, i32(0), i32(n), store(out, v.add(i.mul(2)), i)));
        try (NDArray b = NDArray.allocate(DType.INT32, n)) {
            KilnException e = assertThrows(KilnException.class, () -> Interpreter.run(unguarded, b));
            assertTrue(e.getMessage().contains("zero"), e.getMessage());
        }
    }

    @Test
    void onlyVariablesWithAConstantRangeGetTables() {
        Var o = new Var("o"), rc = new Var("rc");
        Expr idx = o.floordiv(16)
                .mul(1024)
                .add(rc.floordiv(4).mul(64))
                .add(o.floormod(16).mul(4));
        Map<Var, Integer> slots = Map.of(o, 0, rc, 1);
        AffineForm.Range r = new AffineForm.Range(0, 64);
        AffineForm both = AffineForm.of(idx, DType.INT32, slots::get, v -> r);
        assertTrue(both != null && both.hasAtoms());
        assertEquals(null, AffineForm.of(idx, DType.INT32, slots::get, v -> v == o ? r : null), "rc has no range");
        AffineForm plain = AffineForm.of(o.mul(3).add(rc), DType.INT32, slots::get, v -> r);
        assertFalse(plain.hasAtoms(), "an affine index stays one Affine node");
    }

    @Test
    void aVariableOutsideItsTableEvaluatesTheGenericNode() {
        LongNode generic = new IntNodes.Mul(new LeafNodes.VarLong(0), new LeafNodes.ConstLong(100), 32, false);
        LongNode t = new LeafNodes.Tabulated(
                1,
                new int[0],
                new long[0],
                new int[] {0},
                new long[] {2},
                new long[][] {{20, 30, 40}},
                generic,
                32,
                false);
        Frame f = new Frame(1, 0, 0, 0, null);
        f.ints[0] = 3;
        assertEquals(31, t.eval(f), "inside the table: constant + table[3 - 2]");
        f.ints[0] = 7;
        assertEquals(700, t.eval(f), "outside: the generic node");
        f.ints[0] = 1;
        assertEquals(100, t.eval(f), "below the range: the generic node");
    }
}
