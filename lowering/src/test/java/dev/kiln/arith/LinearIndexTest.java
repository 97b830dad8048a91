package dev.kiln.arith;

import static dev.kiln.arith.Check.assertRule;
import static dev.kiln.arith.Check.assertUnchanged;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Index expressions as schedule lowering writes them (tiles, cache_write origins, fused then
 * split loops, guards of partial tiles), simplified through their linear forms: exact result,
 * rule fired, values preserved at random points in range.
 */
class LinearIndexTest {
    private static final Expr TRUE = IntImm.bool(true);
    private final Var f = new Var("f"), g = new Var("g"), i = new Var("i"), j = new Var("j");
    private final Var i0 = new Var("i.0"), i1 = new Var("i.1"), i2 = new Var("i.2"), i3 = new Var("i.3");
    private final Var k0 = new Var("k.0"), k1 = new Var("k.1");

    private static Expr c(long v) {
        return IntImm.i32(v);
    }

    /** The tiled matmul of ScheduleDataTest: i split by (4, 2), i.0 fused with j.0 (extent 6) into f. */
    private Map<Var, IntRange> tiledMatmul() {
        return Map.of(
                f,
                IntRange.ofExtent(0, 24),
                i1,
                IntRange.ofExtent(0, 4),
                i2,
                IntRange.ofExtent(0, 2),
                i,
                IntRange.ofExtent(0, 8),
                j,
                IntRange.ofExtent(0, 8));
    }

    @Test
    void aCacheWriteIndexLosesItsTileOrigin() {
        Expr tile = f.floordiv(6);
        Expr e = tile.mul(4).add(i1).mul(2).add(i2).sub(tile.mul(8));
        assertRule("linear-normalize", e, i1.mul(2).add(i2), tiledMatmul());
        assertRule("linear-normalize", e, i1.mul(2).add(i2)); // a ring identity: no ranges needed
    }

    @Test
    void theGlobalIndexOfATileIsOneLinearForm() {
        Expr tile = f.floordiv(6);
        assertRule(
                "linear-normalize",
                tile.mul(4).add(i1).mul(2).add(i2),
                tile.mul(8).add(i1.mul(2)).add(i2),
                tiledMatmul());
    }

    @Test
    void dividingASplitIndexByItsInnerExtentGivesTheOuterIndex() {
        Map<Var, IntRange> r =
                Map.of(i0, IntRange.ofExtent(0, 10), i1, IntRange.ofExtent(0, 4), j, IntRange.ofExtent(0, 8));
        Expr flat = i0.mul(4).add(i1).mul(8).add(j);
        assertRule("div-split-sum", flat.floordiv(8), i0.mul(4).add(i1), r);
        assertRule("mod-split-sum", flat.floormod(8), j, r);
        assertRule("div-split-sum", flat.floordiv(32), i0, r);
        assertRule("mod-split-sum", flat.floormod(32), i1.mul(8).add(j), r);
        // a remainder in [8, 16) is one block further
        assertRule("div-split-sum", flat.add(8).floordiv(8), i0.mul(4).add(i1).add(1), r);
    }

    @Test
    void aRemainderThatMayLeaveTheBlockKeepsItsDivision() {
        Map<Var, IntRange> r =
                Map.of(i0, IntRange.ofExtent(0, 10), i1, IntRange.ofExtent(0, 4), j, IntRange.ofExtent(0, 9));
        Expr flat = i0.mul(4).add(i1).mul(8).add(j);
        assertRule("div-split-sum", flat.floordiv(8), i0.mul(4).add(i1).add(j.floordiv(8)), r);
        // j without a range: the dividend may wrap, so only the linear form changes
        Map<Var, IntRange> noJ = Map.of(i0, IntRange.ofExtent(0, 10), i1, IntRange.ofExtent(0, 4));
        Expr normal = i0.mul(32).add(i1.mul(8)).add(j);
        assertRule("linear-normalize", flat.floordiv(8), normal.floordiv(8), noJ);
        assertUnchanged("div-split-sum", normal.floordiv(8), noJ);
    }

    @Test
    void aLoopSplitInThreeCollapsesLevelByLevel() {
        Map<Var, IntRange> r = Map.of(
                i0,
                IntRange.ofExtent(0, 4),
                i1,
                IntRange.ofExtent(0, 4),
                i2,
                IntRange.ofExtent(0, 2),
                i3,
                IntRange.ofExtent(0, 8));
        Expr flat = i0.mul(4).add(i1).mul(2).add(i2).mul(8).add(i3);
        assertRule(
                "linear-normalize",
                flat,
                i0.mul(64).add(i1.mul(16)).add(i2.mul(8)).add(i3),
                r);
        assertRule("div-split-sum", flat.floordiv(8), i0.mul(8).add(i1.mul(2)).add(i2), r);
        assertRule("div-split-sum", flat.floordiv(16), i0.mul(4).add(i1), r);
        assertRule("div-split-sum", flat.floordiv(64), i0, r);
        assertRule("mod-split-sum", flat.floormod(16), i2.mul(8).add(i3), r);
        // 24 does not divide the coefficients 64 and 16: nothing leaves the division
        assertRule(
                "linear-normalize",
                flat.floordiv(24),
                i0.mul(64).add(i1.mul(16)).add(i2.mul(8)).add(i3).floordiv(24),
                r);
    }

    @Test
    void aReductionGuardOfWholeTilesFoldsToTrue() {
        Map<Var, IntRange> r = Map.of(k0, IntRange.ofExtent(0, 5), k1, IntRange.ofExtent(0, 4));
        assertRule("compare-by-bounds", k0.mul(4).add(k1).lt(20), TRUE, r);
        assertUnchanged("compare-by-bounds", k0.mul(4).add(k1).lt(19), r);
        assertRule("compare-by-bounds", k0.mul(4).add(k1).ge(0), TRUE, r);
    }

    @Test
    void aGuardOfAPartialTileStays() {
        // 30 rows in tiles of 8: the last tile is partial, the guard is needed
        Expr row = f.floordiv(6).mul(8).add(i);
        assertUnchanged("compare-by-bounds", row.lt(30), tiledMatmul());
        assertRule("compare-by-bounds", row.lt(32), TRUE, tiledMatmul());
    }

    @Test
    void comparisonsOfTwoIndicesCancelTheirCommonTerms() {
        Expr origin = f.floordiv(6).mul(8);
        assertRule("compare-by-bounds", origin.add(i).lt(origin.add(8)), TRUE, tiledMatmul());
        assertRule("compare-by-bounds", origin.add(i).ge(origin), TRUE, tiledMatmul());
        assertRule("min-max-by-bounds", origin.add(i).min(origin.add(7)), origin.add(i), tiledMatmul());
        // without ranges the offsets may wrap: i + 8 > i is false at the int32 maximum
        assertUnchanged("compare-by-bounds", origin.add(i).lt(origin.add(i).add(8)));
    }

    @Test
    void theExtentOfATileRegionIsAConstant() {
        Expr lo = f.floordiv(6).mul(8), hi = f.floordiv(6).mul(8).add(7);
        assertRule("linear-normalize", hi.sub(lo).add(1), c(8));
    }

    @Test
    void aFusedLoopSplitAgainRecombines() {
        // fuse(i, j) with j of extent 5, then index j as floormod(fused, 5) and i as floordiv(fused, 5)
        Map<Var, IntRange> r = Map.of(g, IntRange.ofExtent(0, 15), i0, IntRange.ofExtent(0, 2));
        assertRule("div-mod-recombine", g.floordiv(5).mul(5).add(g.floormod(5)), g);
        assertRule("div-mod-recombine", g.floormod(5).add(j).add(g.floordiv(5).mul(5)), g.add(j));
        assertRule("div-mod-recombine", g.floordiv(5).mul(10).add(g.floormod(5).mul(2)), g.mul(2));
        assertRule("div-mod-recombine", g.truncdiv(4).mul(4).add(g.truncmod(4)), g);
        Expr e = i0.mul(3).add(g.floordiv(5)).mul(5).add(g.floormod(5));
        assertRule("div-mod-recombine", e, i0.mul(15).add(g), r);
        assertRule("compare-by-bounds", e.lt(30), TRUE, r);
        // a different divisor, or a coefficient that is not c times the remainder's, stays
        assertUnchanged("div-mod-recombine", g.floordiv(5).mul(5).add(g.floormod(4)));
        assertUnchanged("div-mod-recombine", g.floordiv(5).mul(4).add(g.floormod(5)));
    }

    @Test
    void recombiningKeepsTheInnerSumLinear() {
        Expr x = i.mul(3).add(j);
        assertRule("div-mod-recombine", x.floordiv(4).mul(4).add(x.floormod(4)).sub(j), i.mul(3));
    }

    @Test
    void splittingLeavesTheQuotientOnlyWhenTheDividendCannotWrap() {
        // int8: b * 16 + 8 for b up to 7 is at most 120 and fits; for b up to 8 it is 136 and wraps
        Var b = new Var("b", DType.INT8), a = new Var("a", DType.INT8);
        Expr e = b.mul(16).add(a).floordiv(16);
        assertRule("div-split-sum", e, b, Map.of(b, IntRange.of(0, 7), a, IntRange.of(0, 8)));
        assertUnchanged("div-split-sum", e, Map.of(b, IntRange.of(0, 8), a, IntRange.of(0, 8)));
        Check.assertSameValues(e, b, Map.of(b, IntRange.of(0, 7), a, IntRange.of(0, 15)), 200, 3);
    }

    @Test
    void uint8IndicesSplitToo() {
        Var b = new Var("b", DType.UINT8), a = new Var("a", DType.UINT8);
        Map<Var, IntRange> r = Map.of(b, IntRange.of(0, 15), a, IntRange.of(0, 15));
        assertRule("div-split-sum", b.mul(16).add(a).floordiv(16), b, r);
        assertRule("mod-split-sum", b.mul(16).add(a).floormod(16), a, r);
    }
}
