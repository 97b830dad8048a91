package dev.kiln.arith;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.CompareOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import java.util.List;
import java.util.Random;

/**
 * Random integer expressions for fuzzing the simplifier and the bound analysis: index-like sums
 * of scaled variables, divisions and remainders by constants (and sometimes by expressions),
 * min/max, selects, casts, and constants near the type's limits so that wrapping happens.
 */
final class RandomExprs {
    private final Random rnd;
    private final List<Var> vars;
    private final DType t;

    RandomExprs(Random rnd, List<Var> vars) {
        this.rnd = rnd;
        this.vars = vars;
        this.t = vars.get(0).dtype();
    }

    Expr intExpr(int depth) {
        if (depth == 0 || rnd.nextInt(5) == 0) return leaf();
        int k = rnd.nextInt(16);
        return switch (k) {
            case 0, 1, 2 -> intExpr(depth - 1).add(intExpr(depth - 1));
            case 3, 4 -> intExpr(depth - 1).sub(intExpr(depth - 1));
            case 5, 6 -> intExpr(depth - 1).mul(smallConst());
            case 7 -> intExpr(depth - 1).mul(intExpr(depth - 1));
            case 8 -> new Binary(divOp(), intExpr(depth - 1), nonZeroConst());
            case 9 -> new Binary(divOp(), intExpr(depth - 1), intExpr(depth - 1)); // may divide by zero
            case 10 -> intExpr(depth - 1).min(intExpr(depth - 1));
            case 11 -> intExpr(depth - 1).max(intExpr(depth - 1));
            case 12 -> new Select(boolExpr(depth - 1), intExpr(depth - 1), intExpr(depth - 1));
            case 13 ->
                t == DType.INT32
                        ? new Cast(DType.INT32, new Cast(DType.INT8, intExpr(depth - 1)))
                        : intExpr(depth - 1).add(smallConst());
            default ->
                new Binary(divOp(), intExpr(depth - 1).mul(smallConst()).add(intExpr(depth - 1)), nonZeroConst());
        };
    }

    /**
     * An index-like expression: mostly nested sums, differences and products with constants
     * (the shapes tiling produces, with like terms to cancel), over atoms that are variables,
     * divisions and remainders by positive constants, min/max and products of two expressions.
     */
    Expr indexExpr(int depth) {
        if (depth == 0 || rnd.nextInt(6) == 0) return leaf();
        return switch (rnd.nextInt(14)) {
            case 0, 1, 2 -> indexExpr(depth - 1).add(indexExpr(depth - 1));
            case 3, 4 -> indexExpr(depth - 1).sub(indexExpr(depth - 1));
            case 5, 6, 7 -> indexExpr(depth - 1).mul(smallConst());
            case 8 -> smallConst().mul(indexExpr(depth - 1));
            case 9 -> {
                Expr x = indexExpr(depth - 1);
                yield x.mul(smallConst()).add(indexExpr(depth - 1)).sub(x.mul(smallConst())); // terms to cancel
            }
            case 10 ->
                new Binary(
                        rnd.nextBoolean() ? BinaryOp.FLOORDIV : BinaryOp.FLOORMOD,
                        indexExpr(depth - 1),
                        positiveConst());
            case 11 -> {
                Expr x = indexExpr(depth - 1);
                Expr k = positiveConst();
                yield x.floordiv(k).mul(k).add(x.floormod(k)).add(indexExpr(depth - 1)); // fused then split
            }
            case 12 -> indexExpr(depth - 1).mul(indexExpr(depth - 1));
            default ->
                rnd.nextBoolean()
                        ? indexExpr(depth - 1).min(indexExpr(depth - 1))
                        : indexExpr(depth - 1).max(indexExpr(depth - 1));
        };
    }

    private Expr positiveConst() {
        return new IntImm(t, Math.min(t.maxInt(), 1 + rnd.nextInt(rnd.nextBoolean() ? 8 : 64)));
    }

    Expr boolExpr(int depth) {
        int k = rnd.nextInt(8);
        if (depth == 0 || k < 5) {
            CompareOp op = CompareOp.values()[rnd.nextInt(CompareOp.values().length)];
            return new Compare(op, intExpr(Math.max(depth - 1, 0)), intExpr(Math.max(depth - 1, 0)));
        }
        return switch (k) {
            case 5 -> boolExpr(depth - 1).and(boolExpr(depth - 1));
            case 6 -> boolExpr(depth - 1).or(boolExpr(depth - 1));
            default -> boolExpr(depth - 1).not();
        };
    }

    private Expr leaf() {
        return rnd.nextInt(3) == 0 ? constant() : vars.get(rnd.nextInt(vars.size()));
    }

    private BinaryOp divOp() {
        BinaryOp[] ops = {BinaryOp.FLOORDIV, BinaryOp.FLOORMOD, BinaryOp.TRUNCDIV, BinaryOp.TRUNCMOD};
        return ops[rnd.nextInt(ops.length)];
    }

    private Expr constant() {
        return switch (rnd.nextInt(6)) {
            case 0 -> new IntImm(t, t.maxInt() - rnd.nextInt(3));
            case 1 -> new IntImm(t, t.minInt() + rnd.nextInt(3));
            default -> smallConst();
        };
    }

    private Expr smallConst() {
        long v = rnd.nextInt(4) == 0 ? rnd.nextInt(65) - 32 : (1L << rnd.nextInt(5)) * (rnd.nextInt(5) == 0 ? -1 : 1);
        return new IntImm(t, Math.max(t.minInt(), Math.min(t.maxInt(), v)));
    }

    private Expr nonZeroConst() {
        long v;
        do {
            v = ((IntImm) smallConst()).value();
        } while (v == 0);
        return new IntImm(t, v);
    }

    /** A random range for a variable: small and non-negative mostly, sometimes negative or wide. */
    static IntRange range(Random rnd, DType t) {
        int kind = rnd.nextInt(4);
        if (t.isUnsigned() && kind == 0) kind = 2;
        return switch (kind) {
            case 0 -> IntRange.of(-rnd.nextInt(20), rnd.nextInt(20));
            case 1 -> IntRange.full(t);
            default -> IntRange.ofExtent(0, 1 + rnd.nextInt((int) Math.min(64, t.maxInt())));
        };
    }
}
