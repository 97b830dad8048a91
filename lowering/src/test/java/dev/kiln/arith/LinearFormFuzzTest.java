package dev.kiln.arith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.fuzz.RandomComputations;
import dev.kiln.fuzz.RandomSchedules;
import dev.kiln.ir.Binary;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import dev.kiln.schedule.ScheduleException;
import dev.kiln.schedule.ScheduleLowering;
import dev.kiln.te.ComputeDAG;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Random index expressions through the linear-form rules, in every integer type: values kept
 * at random points in range (int8/uint8 wrapping included), results that are fixed points,
 * tiled indices that collapse completely, and the index expressions of randomly scheduled
 * programs (whose simplification time is printed, not asserted).
 */
class LinearFormFuzzTest {
    private static final List<DType> TYPES = List.of(DType.INT32, DType.INT8, DType.UINT8, DType.INT16, DType.INT64);

    /** Asserts that no linear-form rule applies anywhere in {@code e} and that simplifying it again changes nothing. */
    private static void assertFixedPoint(Simplifier s, Expr e, Object where) {
        Exprs.forEach(e, n -> {
            if (n instanceof Binary b) {
                assertNull(
                        ArithRules.linearNormalize(b, s),
                        () -> "linear-normalize applies to " + b + " in " + e + ", " + where);
                assertNull(
                        IndexRules.divModRecombine(b, s),
                        () -> "div-mod-recombine applies to " + b + " in " + e + ", " + where);
            }
        });
        Expr again = s.simplify(e);
        assertEquals(e, again, () -> "not a fixed point: " + e + " -> " + again + ", " + where);
    }

    @Test
    void randomIndexExpressionsKeepTheirValuesInEveryIntegerType() {
        Random rnd = new Random(11);
        for (DType t : TYPES) {
            List<Var> vs = List.of(new Var("a", t), new Var("b", t), new Var("c", t));
            for (int n = 0; n < 250; n++) {
                Map<Var, IntRange> ranges = new HashMap<>();
                for (Var v : vs) ranges.put(v, RandomExprs.range(rnd, t));
                Expr x = new RandomExprs(rnd, vs).indexExpr(4);
                Simplifier s = new Simplifier(ranges);
                Expr y = s.simplify(x);
                Check.assertSameValues(x, y, ranges, 40, n);
                assertFixedPoint(s, y, t + " case " + n + " from " + x);
            }
        }
    }

    /** A loop split into levels: v_k in [0, f_k), the index {@code ((v0*f1 + v1)*f2 + v2)...}. */
    private record Tiling(List<Var> vars, long[] factors, Map<Var, IntRange> ranges) {
        static Tiling random(Random rnd, DType t, String name) {
            long cap = t.bits() <= 8 ? 127 : t.bits() == 16 ? 30000 : 1_000_000;
            int levels = 2 + rnd.nextInt(3);
            long[] fs = new long[levels];
            long total = 1;
            for (int k = 0; k < levels; k++) {
                long most = Math.max(1, cap / total / (1L << (levels - k - 1)));
                fs[k] = 1 + rnd.nextLong(Math.min(most, k == 0 ? 16 : 9));
                total *= fs[k];
            }
            List<Var> vs = new ArrayList<>();
            Map<Var, IntRange> r = new HashMap<>();
            for (int k = 0; k < levels; k++) {
                Var v = new Var(name + "." + k, t);
                vs.add(v);
                r.put(v, IntRange.ofExtent(0, fs[k]));
            }
            return new Tiling(vs, fs, r);
        }

        Expr nested(int from, int to) {
            Expr e = vars.get(from);
            for (int k = from + 1; k < to; k++) e = e.mul(factors[k]).add(vars.get(k));
            return e;
        }

        long product(int from, int to) {
            long p = 1;
            for (int k = from; k < to; k++) p *= factors[k];
            return p;
        }
    }

    @Test
    void tiledIndicesCollapseToTheirLevels() {
        Random rnd = new Random(12);
        for (DType t : TYPES) {
            for (int n = 0; n < 120; n++) {
                Tiling tl = Tiling.random(rnd, t, "i");
                Simplifier s = new Simplifier(tl.ranges());
                int levels = tl.vars().size();
                Expr index = tl.nested(0, levels);
                int k = 1 + rnd.nextInt(levels - 1);
                long inner = tl.product(k, levels);
                Expr outer = s.simplify(tl.nested(0, k)), rest = s.simplify(tl.nested(k, levels));
                Expr lit = IntImm.i64(inner);
                Expr c = new IntImm(t, inner);
                String where =
                        t + " " + tl.vars() + " by " + java.util.Arrays.toString(tl.factors()) + " split at " + k;
                List<Expr[]> cases = List.of(
                        new Expr[] {index.floordiv(c), outer},
                        new Expr[] {index.floormod(c), rest},
                        new Expr[] {index.sub(tl.nested(0, k).mul(c)), rest},
                        new Expr[] {index.floordiv(c).mul(c).add(index.floormod(c)), s.simplify(index)},
                        new Expr[] {index.lt(new IntImm(t, tl.product(0, levels))), IntImm.bool(true)},
                        new Expr[] {index.ge(new IntImm(t, 0)), IntImm.bool(true)});
                for (Expr[] pair : cases) {
                    Expr got = s.simplify(pair[0]);
                    assertEquals(pair[1], got, () -> pair[0] + " -> " + got + " for " + where);
                    Check.assertSameValues(pair[0], got, tl.ranges(), 20, n);
                    assertFixedPoint(s, got, where);
                }
                assertTrue(lit.dtype() == DType.INT64);
            }
        }
    }

    @Test
    void theIndicesOfRandomlyScheduledProgramsKeepTheirValues() {
        List<LoweredIndices.Site> sites = new ArrayList<>();
        for (int c = 0; c < 120; c++) {
            SplittableRandom rng = new SplittableRandom(0x51A7L + c);
            ComputeDAG dag = RandomComputations.generate(rng);
            RandomSchedules.Result r = RandomSchedules.generate(dag, rng, rng.nextInt(4) == 0);
            try {
                sites.addAll(LoweredIndices.of(
                        ScheduleLowering.lower("f", r.schedule().replay())));
            } catch (ScheduleException notLowerable) {
                // the differential test counts these; here only the lowered ones matter
            }
        }
        assertTrue(sites.size() > 1000, "only " + sites.size() + " index expressions");
        long[] nanos = new long[3];
        List<Expr> out = new ArrayList<>();
        for (int round = 0; round < nanos.length; round++) {
            out.clear();
            long t0 = System.nanoTime();
            for (LoweredIndices.Site site : sites) out.add(new Simplifier(site.ranges()).simplify(site.expr()));
            nanos[round] = System.nanoTime() - t0;
        }
        System.out.printf(
                "linear forms: simplified %d lowered index expressions in %.1f ms (first round), %.1f ms (third)%n",
                sites.size(), nanos[0] / 1e6, nanos[2] / 1e6);
        int changed = 0;
        for (int n = 0; n < sites.size(); n++) {
            LoweredIndices.Site site = sites.get(n);
            Expr got = out.get(n);
            if (got.equals(site.expr())) continue;
            changed++;
            if (Check.isEvaluable(site.expr())) Check.assertSameValues(site.expr(), got, site.ranges(), 10, n);
            assertFixedPoint(new Simplifier(site.ranges()), got, "site " + n);
        }
        assertTrue(changed > sites.size() / 10, "only " + changed + " of " + sites.size() + " simplified");
    }
}
