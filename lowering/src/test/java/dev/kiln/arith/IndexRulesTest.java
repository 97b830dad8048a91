package dev.kiln.arith;

import static dev.kiln.arith.Check.assertRule;
import static dev.kiln.arith.Check.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** One test per index and range rule: exact result form, rule fired, values preserved in range. */
class IndexRulesTest {
    private final Var i = new Var("i"), i0 = new Var("i.0"), i1 = new Var("i.1"), i2 = new Var("i.2");
    private final Var j = new Var("j");

    private static Expr c(long v) {
        return IntImm.i32(v);
    }

    private Map<Var, IntRange> split(long outer, long inner) {
        return Map.of(i0, IntRange.ofExtent(0, outer), i1, IntRange.ofExtent(0, inner));
    }

    @Test
    void truncToFloor() {
        Map<Var, IntRange> r = Map.of(i, IntRange.of(0, 100));
        assertRule("trunc-to-floor", i.truncdiv(4), i.floordiv(4), r);
        assertRule("trunc-to-floor", i.truncmod(4), i.floormod(4), r);
        assertUnchanged("trunc-to-floor", i.truncdiv(4), Map.of(i, IntRange.of(-5, 100)));
    }

    @Test
    void divByBounds() {
        assertRule("div-by-bounds", i.floordiv(8), c(0), Map.of(i, IntRange.of(0, 7)));
        assertRule("div-by-bounds", i.floordiv(8), c(2), Map.of(i, IntRange.of(16, 23)));
        assertRule("div-by-bounds", i.floordiv(8), c(-1), Map.of(i, IntRange.of(-8, -1)));
        assertUnchanged("div-by-bounds", i.floordiv(8), Map.of(i, IntRange.of(0, 8)));
    }

    @Test
    void modByBounds() {
        assertRule("mod-by-bounds", i.floormod(8), i, Map.of(i, IntRange.of(0, 7)));
        assertUnchanged("mod-by-bounds", i.floormod(8), Map.of(i, IntRange.of(0, 8)));
        assertUnchanged("mod-by-bounds", i.floormod(8), Map.of(i, IntRange.of(-1, 5)));
    }

    @Test
    void divOfMultiple() {
        Map<Var, IntRange> r = Map.of(i, IntRange.of(-1000, 1000));
        assertRule("div-of-multiple", i.mul(8).floordiv(8), i, r);
        assertRule("div-of-multiple", i.mul(8).floordiv(4), i.mul(2), r);
    }

    @Test
    void divOfMultipleNeedsProofThatTheProductDoesNotWrap() {
        // Without a range, i * 8 can wrap: at i = 2^29 it is 2^32 = 0 in int32, so floordiv gives 0, not i.
        Expr e = i.mul(8).floordiv(8);
        assertUnchanged("div-of-multiple", e);
        assertEquals(0, new TestEval(Map.of(i, 1L << 29)).i(e));
    }

    @Test
    void modOfMultiple() {
        assertRule("mod-of-multiple", i.mul(8).floormod(4), c(0), Map.of(i, IntRange.of(0, 1000)));
        assertUnchanged("mod-of-multiple", i.mul(6).floormod(4), Map.of(i, IntRange.of(0, 1000)));
    }

    @Test
    void divSplitSum() {
        // the headline case: split of a loop by 8, index of the original loop
        assertRule("div-split-sum", i0.mul(8).add(i1).floordiv(8), i0, split(64, 8));
        assertRule(
                "div-split-sum",
                i0.mul(8).add(i1).floordiv(8),
                i0.add(i1.floordiv(8)),
                Map.of(i0, IntRange.ofExtent(0, 64), i1, IntRange.of(0, 20)));
        assertRule(
                "div-split-sum",
                i1.add(i0.mul(8)).floordiv(8),
                i0.add(i1.floordiv(8)),
                Map.of(i0, IntRange.ofExtent(0, 64), i1, IntRange.of(0, 20)));
        // three levels of tiling
        Map<Var, IntRange> r3 =
                Map.of(i0, IntRange.ofExtent(0, 4), i1, IntRange.ofExtent(0, 8), i2, IntRange.ofExtent(0, 8));
        assertRule(
                "div-split-sum",
                i0.mul(64).add(i1.mul(8)).add(i2).floordiv(8),
                i0.mul(8).add(i1),
                r3);
        // a constant of at least the divisor splits into quotient and remainder
        assertRule("div-split-sum", i.add(17).floordiv(8), i.add(1).floordiv(8).add(2), Map.of(i, IntRange.of(0, 100)));
        // a subtracted multiple
        assertRule(
                "div-split-sum",
                i.sub(j.mul(4)).floordiv(4),
                i.floordiv(4).sub(j),
                Map.of(i, IntRange.of(-50, 50), j, IntRange.of(-50, 50)));
    }

    @Test
    void divSplitSumNeedsProofThatNoPartialSumWraps() {
        assertUnchanged("div-split-sum", i0.mul(8).add(i1).floordiv(8));
        assertUnchanged(
                "div-split-sum",
                i0.mul(8).add(i1).floordiv(8),
                Map.of(i0, IntRange.of(0, 1 << 27), i1, IntRange.full(dev.kiln.ir.DType.INT32)));
    }

    @Test
    void modSplitSum() {
        assertRule("mod-split-sum", i0.mul(8).add(i1).floormod(8), i1, split(64, 8));
        assertRule(
                "mod-split-sum",
                i0.mul(8).add(i1).floormod(4),
                i1.floormod(4),
                Map.of(i0, IntRange.ofExtent(0, 64), i1, IntRange.of(0, 20)));
        assertRule("mod-split-sum", i0.mul(8).add(16).floormod(8), c(0), split(64, 8));
        assertUnchanged("mod-split-sum", i0.mul(8).add(i1).floormod(8));
    }

    @Test
    void fuseThenSplitBackWithAnOddExtent() {
        Map<Var, IntRange> r = Map.of(i, IntRange.ofExtent(0, 9), j, IntRange.ofExtent(0, 7));
        Expr fused = i.mul(7).add(j);
        assertRule("div-split-sum", fused.floordiv(7), i, r);
        assertRule("mod-split-sum", fused.floormod(7), j, r);
    }

    @Test
    void divDiv() {
        assertRule("div-div", i.floordiv(4).floordiv(8), i.floordiv(32));
        assertUnchanged("div-div", i.floordiv(1 << 16).floordiv(1 << 16)); // 2^32 does not fit int32
    }

    @Test
    void modMod() {
        assertRule("mod-mod", i.floormod(32).floormod(8), i.floormod(8));
        assertUnchanged("mod-mod", i.floormod(12).floormod(8));
        // why 12, 8 must stay: 13 mod 12 mod 8 = 1 but 13 mod 8 = 5
        assertNotEquals(
                new TestEval(Map.of(i, 13L)).i(i.floormod(12).floormod(8)),
                new TestEval(Map.of(i, 13L)).i(i.floormod(8)));
    }

    @Test
    void varByRange() {
        assertRule("var-by-range", i.mul(4).add(j), j.add(12), Map.of(i, IntRange.single(3)));
        assertUnchanged("var-by-range", i, Map.of(i, IntRange.of(3, 4)));
    }

    @Test
    void comparisonOfATiledIndexFoldsToTrue() {
        assertRule("compare-by-bounds", i0.mul(8).add(i1).lt(512), IntImm.bool(true), split(64, 8));
        assertUnchanged("compare-by-bounds", i0.mul(8).add(i1).lt(511), split(64, 8));
    }
}
