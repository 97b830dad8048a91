package dev.kiln.lower;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.arith.TestExec;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The Simplify pass on lowered functions: simpler code, same results. */
class SimplifyTest {
    private static void assertSameResults(PrimFunc before, PrimFunc after) {
        for (long seed = 1; seed <= 3; seed++) {
            Map<Buffer, Number[]> want = TestExec.run(before, seed), got = TestExec.run(after, seed);
            for (Buffer b : before.params()) assertArrayEquals(want.get(b), got.get(b), "buffer " + b.name());
        }
    }

    @Test
    void splitIndicesCollapseBackToTheLoopVariables() {
        for (long[] shape : new long[][] {{16, 4}, {5, 7}, {3, 1}}) {
            long n = shape[1];
            Tensor a = Te.placeholder("A", DType.FLOAT32, shape[0], n);
            Tensor b = Te.compute("B", Te.shape(shape[0], n), (i, j) -> {
                Expr flat = i.mul(n).add(j);
                return a.at(flat.floordiv(n), flat.floormod(n)).mul(2.0);
            });
            PrimFunc before = LowerDefault.lower("f", List.of(a, b));
            PrimFunc after = Simplify.apply(before);
            String text = after.toString();
            assertFalse(text.contains("floordiv") || text.contains("floormod"), text);
            // with one column, the loop over j runs once and goes away: j is 0
            assertTrue(text.contains(n == 1 ? "B[i, 0] = (A[i, 0] * 2.0f)" : "B[i, j] = (A[i, j] * 2.0f)"), text);
            assertSameResults(before, after);
        }
    }

    @Test
    void aReductionConditionTheLoopsProveTrueDisappears() {
        Tensor a = Te.placeholder("A", DType.FLOAT32, 6, 9);
        IterVar k = Te.reduceAxis(9, "k");
        Tensor c = Te.compute(
                "C", Te.shape(6), i -> Te.sum(List.of(k), a.at(i, k), k.lt(9).and(i.ge(0))));
        PrimFunc before = LowerDefault.lower("rowsum", List.of(a, c));
        assertTrue(before.toString().contains("if "), before.toString());
        PrimFunc after = Simplify.apply(before);
        assertFalse(after.toString().contains("if "), after.toString());
        assertSameResults(before, after);
    }

    @Test
    void aConditionThatDependsOnTheDataStays() {
        Tensor a = Te.placeholder("A", DType.FLOAT32, 6, 9);
        IterVar k = Te.reduceAxis(9, "k");
        Tensor c = Te.compute("C", Te.shape(6), i -> Te.sum(List.of(k), a.at(i, k), k.lt(i.add(2))));
        PrimFunc before = LowerDefault.lower("prefix", List.of(a, c));
        PrimFunc after = Simplify.apply(before);
        assertTrue(after.toString().contains("if (k < (i + 2))"), after.toString());
        assertSameResults(before, after);
    }

    @Test
    void aFunctionWithNothingToSimplifyComesBackAsTheSameObject() {
        Tensor a = Te.placeholder("A", DType.FLOAT32, 8, 3);
        Tensor b = Te.compute("B", Te.shape(8, 3), (i, j) -> a.at(i, j).add(1.0));
        PrimFunc f = LowerDefault.lower("add1", List.of(a, b));
        assertSame(f, Simplify.apply(f));
        assertEquals(f, Simplify.apply(Simplify.apply(f)));
    }
}
