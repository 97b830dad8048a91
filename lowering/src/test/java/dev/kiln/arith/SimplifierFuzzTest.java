package dev.kiln.arith;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Var;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Every rule together: random expressions keep their value at random points after simplification. */
class SimplifierFuzzTest {
    @Test
    void randomIntegerExpressionsKeepTheirValues() {
        Random rnd = new Random(5);
        for (DType t : List.of(DType.INT32, DType.INT8, DType.UINT8, DType.INT16, DType.INT64)) {
            List<Var> vs = List.of(new Var("a", t), new Var("b", t), new Var("c", t));
            for (int e = 0; e < 300; e++) {
                Map<Var, IntRange> ranges = new HashMap<>();
                for (Var v : vs) ranges.put(v, RandomExprs.range(rnd, t));
                RandomExprs gen = new RandomExprs(rnd, vs);
                Expr x = e % 4 == 3 ? gen.boolExpr(3) : gen.intExpr(4);
                Expr y = new Simplifier(ranges).simplify(x);
                Check.assertSameValues(x, y, ranges, 60, e);
            }
        }
    }

    @Test
    void simplifyingTwiceChangesNothing() {
        Random rnd = new Random(6);
        List<Var> vs = List.of(new Var("a"), new Var("b"));
        for (int e = 0; e < 300; e++) {
            Map<Var, IntRange> ranges = Map.of(
                    vs.get(0), RandomExprs.range(rnd, DType.INT32), vs.get(1), RandomExprs.range(rnd, DType.INT32));
            Simplifier s = new Simplifier(ranges);
            Expr once = s.simplify(new RandomExprs(rnd, vs).intExpr(4));
            Expr twice = s.simplify(once);
            org.junit.jupiter.api.Assertions.assertEquals(once, twice, "not a fixed point: " + once + " -> " + twice);
        }
    }
}
