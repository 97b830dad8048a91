package dev.kiln.jit;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.i32;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Stmt;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Blocked transposing copies ({@link TransposeBlock}): {@code dst[k, l] = src[l, k]} over blocks of W x (a multiple
 * of W), the inner loop vectorized along {@code l}, against plain Java on seeded random values, exact. Taken, the
 * program loads and stores whole vectors and shuffles them (no gather); where the pattern does not hold it is the
 * loop's own code, still exact.
 */
class TransposeBlockTest {
    /**
     * src [rows, cols], dst [cols, rows]; for l0, k0: for k1 in [0, kBlock) (kind): vectorized for l1 in [0, w):
     * dst[k0 * kBlock + k1, l0 * w + l1] = src[l0 * w + l1, k0 * kBlock + k1].
     */
    private static PrimFunc copy(DType t, int rows, int cols, int w, int kBlock, ForKind kind) {
        Buffer src = buf("src", t, rows, cols), dst = buf("dst", t, cols, rows);
        Var l0 = new Var("l0"), k0 = new Var("k0"), k1 = new Var("k1"), l1 = new Var("l1");
        Expr l = l0.mul(i32(w)).add(l1), k = k0.mul(i32(kBlock)).add(k1);
        Stmt body = loop(l1, w, ForKind.VECTORIZED, store(dst, load(src, l, k), k, l));
        Stmt nest = loop(
                l0, rows / w, ForKind.SERIAL, loop(k0, cols / kBlock, ForKind.SERIAL, loop(k1, kBlock, kind, body)));
        return new PrimFunc(
                "transpose_" + t.name().toLowerCase(java.util.Locale.ROOT) + "_" + w, List.of(src, dst), nest);
    }

    @ParameterizedTest
    @CsvSource({
        "FLOAT32, 16, 16, SERIAL",
        "FLOAT32, 16, 32, SERIAL",
        "FLOAT32, 16, 16, UNROLLED",
        "FLOAT32, 8, 8, SERIAL",
        "INT32, 4, 8, SERIAL",
        "FLOAT64, 8, 8, SERIAL",
        "INT64, 4, 4, SERIAL",
        "FLOAT32, 32, 16, SERIAL",
        "FLOAT32, 64, 32, SERIAL",
        "FLOAT32, 16, 8, SERIAL",
        "FLOAT32, 16, 4, SERIAL",
        "INT32, 32, 8, SERIAL"
    })
    void blocksAreTransposedInRegistersExactly(DType t, int w, int kBlock, ForKind kind) {
        int rows = 192, cols = 64;
        try (LlvmKernel k = JitCheck.BACKEND.compile(
                copy(t, rows, cols, w, kBlock, kind), JitCheck.TARGET, JitOptions.defaults())) {
            check(k, t, rows, cols);
            assertThat(k.generatedIr()).contains("shufflevector").doesNotContain("llvm.masked.gather");
        }
    }

    @Test
    void loopsStartingAtAnOuterLoopsValueAreTransposedToo() {
        // for k0: for k in [k0 * 16, k0 * 16 + 16): vectorized for l in [l0 * 16, l0 * 16 + 16): the mins are values
        // of the loops around, not constants
        int rows = 48, cols = 64, w = 16;
        Buffer src = buf("src", DType.FLOAT32, rows, cols), dst = buf("dst", DType.FLOAT32, cols, rows);
        Var l0 = new Var("l0"), k0 = new Var("k0"), k = new Var("k"), l = new Var("l");
        Stmt copy = new dev.kiln.tir.For(
                l, l0.mul(i32(w)), i32(w), ForKind.VECTORIZED, null, store(dst, load(src, l, k), k, l));
        Stmt nest = loop(
                l0,
                rows / w,
                ForKind.SERIAL,
                loop(
                        k0,
                        cols / w,
                        ForKind.SERIAL,
                        new dev.kiln.tir.For(k, k0.mul(i32(w)), i32(w), ForKind.SERIAL, null, copy)));
        try (LlvmKernel kern = JitCheck.BACKEND.compile(
                new PrimFunc("transpose_offset_mins", List.of(src, dst), nest),
                JitCheck.TARGET,
                JitOptions.defaults())) {
            check(kern, DType.FLOAT32, rows, cols);
            assertThat(kern.generatedIr()).contains("shufflevector").doesNotContain("llvm.masked.gather");
        }
    }

    @Test
    void aStridedStoreKeepsTheLoopsOwnCode() {
        // dst[l, k] = src[l, k] with l vectorized: both sides a row apart, no transposition to make
        int rows = 32, cols = 16, w = 16;
        Buffer src = buf("src", DType.FLOAT32, rows, cols), dst = buf("dst", DType.FLOAT32, rows, cols);
        Var l0 = new Var("l0"), k1 = new Var("k1"), l1 = new Var("l1");
        Expr l = l0.mul(i32(w)).add(l1);
        Stmt nest = loop(
                l0,
                rows / w,
                ForKind.SERIAL,
                loop(k1, cols, ForKind.SERIAL, loop(l1, w, ForKind.VECTORIZED, store(dst, load(src, l, k1), l, k1))));
        try (LlvmKernel k = JitCheck.BACKEND.compile(
                        new PrimFunc("strided_copy", List.of(src, dst), nest), JitCheck.TARGET, JitOptions.defaults());
                NDArray a = NDArray.allocate(src);
                NDArray b = NDArray.allocate(dst)) {
            fill(a, DType.FLOAT32, rows * cols);
            k.call(a, b);
            for (int j = 0; j < rows * cols; j++) assertThat(b.getDoubleFlat(j)).isEqualTo(a.getDoubleFlat(j));
            assertThat(k.generatedIr()).contains("llvm.masked.gather");
        }
    }

    private static void check(LlvmKernel k, DType t, int rows, int cols) {
        try (NDArray a = NDArray.allocate(t, rows, cols);
                NDArray b = NDArray.allocate(t, cols, rows)) {
            fill(a, t, rows * cols);
            k.call(a, b);
            for (int l = 0; l < rows; l++)
                for (int c = 0; c < cols; c++)
                    assertThat(b.getDoubleFlat(c * rows + l))
                            .as("dst[%d, %d]", c, l)
                            .isEqualTo(a.getDoubleFlat(l * cols + c));
        }
    }

    private static void fill(NDArray a, DType t, int n) {
        Random r = new Random(20261205);
        for (int j = 0; j < n; j++) a.setDoubleFlat(t.isFloat() ? r.nextGaussian() : r.nextInt(1 << 20) - (1 << 19), j);
    }
}
