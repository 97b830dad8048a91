package dev.kiln.cuda.codegen;

import static dev.kiln.cuda.codegen.CudaTypes.fromDouble;
import static dev.kiln.cuda.codegen.CudaTypes.fromFloat;
import static dev.kiln.cuda.codegen.CudaTypes.isHalfLike;
import static dev.kiln.cuda.codegen.CudaTypes.isNarrowInt;
import static dev.kiln.cuda.codegen.CudaTypes.name;
import static dev.kiln.cuda.codegen.CudaTypes.toFloat;

import dev.kiln.arith.ConstIntBound;
import dev.kiln.arith.IntRange;
import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Select;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

/**
 * CUDA C for expressions of the loop IR, with the interpreter's semantics (see
 * {@link dev.kiln.interp.Interpreter}):
 * <ul>
 *   <li>float16 and bfloat16 operations are computed in float and rounded back after every
 *       operation (exact for + - * / and sqrt, since float has more than twice their precision);
 *   <li>integer + - * wrap: where the bounds of the loop variables prove that an operation cannot
 *       overflow it is written plainly, otherwise through the unsigned type; index arithmetic
 *       (load and store indices) never wraps in a valid program and is written plainly;
 *   <li>floor division and remainder, division by a divisor that may be zero, and MIN / -1 go
 *       through {@link Helper} functions; a division a bound proves plain is written with C's
 *       {@code /} and {@code %};
 *   <li>without fast math, transcendental functions of float and 16-bit types are computed in
 *       double and rounded once, like the interpreter; with fast math they use CUDA's fast
 *       intrinsics ({@code __expf}, {@code __logf}, {@code __powf}, {@code rsqrtf}, ...) and
 *       float min/max become {@code fminf}/{@code fmaxf}.
 * </ul>
 */
final class ExprGen {
    private final String funcName;
    private final CudaNames names;
    private final ConstIntBound bounds;
    private final boolean fastMath;
    final EnumSet<Helper> helpers = EnumSet.noneOf(Helper.class);
    final EnumSet<DType> dtypes = EnumSet.noneOf(DType.class);
    private boolean inIndex;

    ExprGen(String funcName, CudaNames names, ConstIntBound bounds, boolean fastMath) {
        this.funcName = funcName;
        this.names = names;
        this.bounds = bounds;
        this.fastMath = fastMath;
    }

    /** An index expression: integer arithmetic that never wraps. */
    String index(Expr e) {
        boolean saved = inIndex;
        inIndex = true;
        try {
            return gen(e);
        } finally {
            inIndex = saved;
        }
    }

    /** The element offset of an access: the index of a flat view, or {@code sum(index[d] * stride[d])}. */
    String offset(Buffer b, List<Expr> indices) {
        if (indices.size() == 1 && b.strides().getFirst() instanceof IntImm s && s.value() == 1)
            return index(indices.getFirst());
        long[] strides = b.constStrides();
        List<String> terms = new ArrayList<>();
        for (int d = 0; d < indices.size(); d++) {
            String i = index(indices.get(d));
            terms.add(
                    strides[d] == 1
                            ? i
                            : "(" + i + " * " + strides[d] + (indices.get(d).dtype() == DType.INT64 ? "LL" : "") + ")");
        }
        return String.join(" + ", terms);
    }

    String gen(Expr e) {
        dtypes.add(e.dtype());
        return switch (e) {
            case IntImm c -> CudaTypes.literal(c);
            case FloatImm c -> CudaTypes.literal(c);
            case Var v -> names.var(v);
            case Binary b -> binary(b);
            case Compare c -> compare(c);
            case And a -> "(" + gen(a.a()) + " && " + gen(a.b()) + ")";
            case Or o -> "(" + gen(o.a()) + " || " + gen(o.b()) + ")";
            case Not n -> "(!" + gen(n.a()) + ")";
            case Select s -> "(" + gen(s.cond()) + " ? " + gen(s.t()) + " : " + gen(s.f()) + ")";
            case Cast c -> CastGen.cast(this, c.value().dtype(), c.dtype(), gen(c.value()));
            case Call c -> call(c);
            case BufferLoad l -> names.buffer(l.buffer()) + "[" + offset(l.buffer(), l.indices()) + "]";
            case TensorRead r ->
                throw new KilnException("function '" + funcName + "': tensor read " + ExprPrinter.print(r)
                        + " must be lowered to a buffer load before CUDA code generation");
            case Reduce r ->
                throw new KilnException("function '" + funcName + "': reduction " + ExprPrinter.print(r)
                        + " must be lowered to loops before CUDA code generation");
        };
    }

    void use(Helper h) {
        helpers.add(h);
    }

    // ---- arithmetic ------------------------------------------------------------------------

    private String binary(Binary e) {
        DType t = e.dtype();
        String a = gen(e.a()), b = gen(e.b());
        if (t.isFloat()) return floatBinary(e.op(), t, a, b);
        return switch (e.op()) {
            case ADD -> wrapping(e, a, "+", b);
            case SUB -> wrapping(e, a, "-", b);
            case MUL -> wrapping(e, a, "*", b);
            case MIN, MAX -> {
                String f = e.op() == BinaryOp.MIN ? "min" : "max";
                yield isNarrowInt(t)
                        ? "((" + name(t) + ")" + f + "((int)" + a + ", (int)" + b + "))"
                        : f + "(" + a + ", " + b + ")";
            }
            case FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD -> division(e, a, b);
            case DIV -> throw new IllegalStateException("integer div is rejected by Binary");
        };
    }

    /** Integer + - *: plain where it cannot overflow (index arithmetic, or a bound proves it), else modulo 2^n. */
    private String wrapping(Binary e, String a, String op, String b) {
        DType t = e.dtype();
        boolean proven = inIndex || t == DType.BOOL || !bounds.bound(e).equals(IntRange.full(t));
        if (isNarrowInt(t))
            return proven ? "(" + a + " " + op + " " + b + ")" : "((" + name(t) + ")(" + a + " " + op + " " + b + "))";
        if (proven) return "(" + a + " " + op + " " + b + ")";
        String u = t == DType.INT64 ? "unsigned long long" : "unsigned";
        return "((" + name(t) + ")((" + u + ")" + a + " " + op + " (" + u + ")" + b + "))";
    }

    private String division(Binary e, String a, String b) {
        DType t = e.dtype();
        IntRange x = bounds.bound(e.a()), y = bounds.bound(e.b());
        boolean floor = e.op() == BinaryOp.FLOORDIV || e.op() == BinaryOp.FLOORMOD;
        boolean div = e.op() == BinaryOp.FLOORDIV || e.op() == BinaryOp.TRUNCDIV;
        if (y.isSingle() && y.min() == 0) {
            throw new KilnException("function '" + funcName + "': division by zero in " + ExprPrinter.print(e));
        }
        // C's / and % truncate; they are exact when the divisor cannot be 0 or -1 (the one overflow),
        // and, for floor division, when both operands are non-negative.
        boolean plain = floor ? x.min() >= 0 && y.min() > 0 : y.min() > 0 || y.max() < -1;
        if (plain) {
            String r = "(" + a + (div ? " / " : " % ") + b + ")";
            return isNarrowInt(t) ? "((" + name(t) + ")" + r + ")" : r;
        }
        String fn = "kiln_" + e.op().symbol();
        if (t == DType.INT64) {
            use(Helper.DIV_I64);
            return fn + "_i64(" + a + ", " + b + ")";
        }
        use(Helper.DIV_I32);
        if (isNarrowInt(t)) return "((" + name(t) + ")" + fn + "_i32((int)" + a + ", (int)" + b + "))";
        return fn + "_i32(" + a + ", " + b + ")";
    }

    private String floatBinary(BinaryOp op, DType t, String a, String b) {
        if (op == BinaryOp.MIN || op == BinaryOp.MAX) {
            String f;
            if (fastMath) {
                f = (op == BinaryOp.MIN ? "fmin" : "fmax") + (t == DType.FLOAT64 ? "" : "f");
            } else {
                use(Helper.FMINMAX);
                f = op == BinaryOp.MIN ? "kiln_fmin" : "kiln_fmax";
            }
            if (isHalfLike(t)) return fromFloat(t, f + "(" + toFloat(t, a) + ", " + toFloat(t, b) + ")");
            return f + "(" + a + ", " + b + ")";
        }
        String sym =
                switch (op) {
                    case ADD -> "+";
                    case SUB -> "-";
                    case MUL -> "*";
                    case DIV -> "/";
                    case MIN, MAX, FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD ->
                        throw new IllegalStateException(op + " on " + t);
                };
        if (isHalfLike(t)) return fromFloat(t, toFloat(t, a) + " " + sym + " " + toFloat(t, b));
        return "(" + a + " " + sym + " " + b + ")";
    }

    private String compare(Compare c) {
        DType t = c.a().dtype();
        String a = gen(c.a()), b = gen(c.b());
        if (isHalfLike(t)) {
            a = toFloat(t, a);
            b = toFloat(t, b);
        }
        return "(" + a + " " + c.op().symbol() + " " + b + ")";
    }

    // ---- intrinsics ------------------------------------------------------------------------

    private String call(Call c) {
        DType t = c.dtype();
        List<String> args = new ArrayList<>();
        for (Expr a : c.args()) args.add(gen(a));
        if (!t.isFloat()) return intAbs(t, args.getFirst());
        return switch (t) {
            case FLOAT32 -> fastMath ? MathGen.fastFloat(c.fn(), args) : MathGen.exactFloat(c.fn(), args);
            case FLOAT64 -> MathGen.double_(c.fn(), args);
            case FLOAT16, BFLOAT16 -> MathGen.half(c.fn(), t, args, fastMath);
            case INT8, INT16, INT32, INT64, UINT8, BOOL -> throw new IllegalStateException("float call of " + t);
        };
    }

    private String intAbs(DType t, String x) {
        return switch (t) {
            case UINT8, BOOL -> x;
            case INT8, INT16 -> "((" + name(t) + ")abs((int)" + x + "))";
            case INT32 -> {
                use(Helper.ABS_INT);
                yield "kiln_abs_i32(" + x + ")";
            }
            case INT64 -> {
                use(Helper.ABS_INT);
                yield "kiln_abs_i64(" + x + ")";
            }
            case FLOAT16, BFLOAT16, FLOAT32, FLOAT64 -> throw new IllegalStateException("integer abs of " + t);
        };
    }

    static String toDouble(DType t, String x) {
        if (t == DType.FLOAT64) return x;
        if (isHalfLike(t)) return "(double)" + toFloat(t, x);
        return "(double)" + x;
    }

    static String fromDoubleTo(DType t, String x) {
        return switch (t) {
            case FLOAT64 -> x;
            case FLOAT32 -> "(float)(" + x + ")";
            case FLOAT16, BFLOAT16 -> fromDouble(t, x);
            case INT8, INT16, INT32, INT64, UINT8, BOOL -> throw new IllegalStateException("not a float: " + t);
        };
    }
}
