package dev.kiln.te;

import dev.kiln.ir.Call;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Intrinsic;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Range;
import dev.kiln.ir.Reducer;
import dev.kiln.ir.Select;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The front door of the DSL; import it statically:
 *
 * <pre>{@code
 * Tensor A = placeholder("A", FLOAT32, M, K);
 * Tensor B = placeholder("B", FLOAT32, K, N);
 * IterVar k = reduceAxis(K, "k");
 * Tensor C = compute("C", shape(M, N), (i, j) -> sum(k, A.at(i, k).mul(B.at(k, j))));
 * }</pre>
 *
 * Elementwise minimum and maximum are {@link #minimum} and {@link #maximum}; {@code min} and
 * {@code max} are reductions.
 */
public final class Te {
    private Te() {}

    // ---- tensors ----------------------------------------------------------------------------

    public static Shape shape(long... dims) {
        return Shape.of(dims);
    }

    /** An input tensor. */
    public static Tensor placeholder(String name, DType dtype, long... shape) {
        if (shape == null) throw new KilnException("placeholder '" + name + "': the shape is null");
        Shape s;
        try {
            s = Shape.of(shape);
        } catch (KilnException e) {
            throw new KilnException("placeholder '" + name + "': " + e.getMessage());
        }
        return placeholder(name, dtype, s);
    }

    /** An input tensor. */
    public static Tensor placeholder(String name, DType dtype, Shape shape) {
        if (name == null || name.isEmpty())
            throw new KilnException("placeholder: the name is " + (name == null ? "null" : "empty"));
        if (dtype == null) throw new KilnException("placeholder '" + name + "': the dtype is null");
        if (shape == null) throw new KilnException("placeholder '" + name + "': the shape is null");
        return new PlaceholderOp(name, shape, dtype).output(0);
    }

    /**
     * Names for the spatial axes of a compute, outermost first:
     * {@code compute("C", shape(M, N), names("row", "col"), ...)}.
     */
    public static AxisNames names(String... names) {
        return AxisNames.of(names);
    }

    public static Tensor compute(Shape s, IndexFn.F1 f) {
        return compute("compute", s, f);
    }

    public static Tensor compute(Shape s, IndexFn.F2 f) {
        return compute("compute", s, f);
    }

    public static Tensor compute(Shape s, IndexFn.F3 f) {
        return compute("compute", s, f);
    }

    public static Tensor compute(Shape s, IndexFn.F4 f) {
        return compute("compute", s, f);
    }

    public static Tensor compute(Shape s, IndexFn.F5 f) {
        return compute("compute", s, f);
    }

    public static Tensor compute(Shape s, IndexFn.F6 f) {
        return compute("compute", s, f);
    }

    public static Tensor compute(String name, Shape s, IndexFn.F1 f) {
        return compute(name, s, null, f);
    }

    public static Tensor compute(String name, Shape s, IndexFn.F2 f) {
        return compute(name, s, null, f);
    }

    public static Tensor compute(String name, Shape s, IndexFn.F3 f) {
        return compute(name, s, null, f);
    }

    public static Tensor compute(String name, Shape s, IndexFn.F4 f) {
        return compute(name, s, null, f);
    }

    public static Tensor compute(String name, Shape s, IndexFn.F5 f) {
        return compute(name, s, null, f);
    }

    public static Tensor compute(String name, Shape s, IndexFn.F6 f) {
        return compute(name, s, null, f);
    }

    /**
     * A compute whose spatial axis is named by the user (see {@link AxisNames}); with a null
     * {@code names} the axes get the default names {@code i, j, k, ...}.
     */
    public static Tensor compute(String name, Shape s, AxisNames names, IndexFn.F1 f) {
        return computeN(name, s, names, 1, f, a -> f.apply(a.get(0)));
    }

    public static Tensor compute(String name, Shape s, AxisNames names, IndexFn.F2 f) {
        return computeN(name, s, names, 2, f, a -> f.apply(a.get(0), a.get(1)));
    }

    public static Tensor compute(String name, Shape s, AxisNames names, IndexFn.F3 f) {
        return computeN(name, s, names, 3, f, a -> f.apply(a.get(0), a.get(1), a.get(2)));
    }

    public static Tensor compute(String name, Shape s, AxisNames names, IndexFn.F4 f) {
        return computeN(name, s, names, 4, f, a -> f.apply(a.get(0), a.get(1), a.get(2), a.get(3)));
    }

    public static Tensor compute(String name, Shape s, AxisNames names, IndexFn.F5 f) {
        return computeN(name, s, names, 5, f, a -> f.apply(a.get(0), a.get(1), a.get(2), a.get(3), a.get(4)));
    }

    public static Tensor compute(String name, Shape s, AxisNames names, IndexFn.F6 f) {
        return computeN(name, s, names, 6, f, a -> f.apply(a.get(0), a.get(1), a.get(2), a.get(3), a.get(4), a.get(5)));
    }

    private static Tensor computeN(
            String name, Shape s, AxisNames names, int arity, Object lambda, Function<List<IterVar>, Expr> f) {
        SpatialAxes.requireArguments(name, s, lambda);
        if (s.rank() != arity) {
            throw new KilnException("compute '" + name + "': shape " + s + " has rank " + s.rank()
                    + " but the index lambda takes " + arity + " index(es)");
        }
        return SpatialAxes.build(name, "", s, names, a -> Collections.singletonList(f.apply(a)))
                .output(0);
    }

    /** Rank-generic compute: the lambda receives one axis per dimension of {@code s}. */
    public static Tensor computeN(String name, Shape s, Function<List<IterVar>, Expr> f) {
        return computeN(name, "", s, null, f);
    }

    /** Rank-generic compute with a tag (a label such as "conv2d_nhwc" that tools may read). */
    public static Tensor computeN(String name, String tag, Shape s, Function<List<IterVar>, Expr> f) {
        return computeN(name, tag, s, null, f);
    }

    /** Rank-generic compute with a tag and named axes (null for the default names). */
    public static Tensor computeN(String name, String tag, Shape s, AxisNames names, Function<List<IterVar>, Expr> f) {
        SpatialAxes.requireArguments(name, s, f);
        return SpatialAxes.build(name, tag, s, names, a -> Collections.singletonList(f.apply(a)))
                .output(0);
    }

    /**
     * A compute with several outputs over the same axes; for a multi-value reduction
     * ({@code argmax.reduce(...)}) the lambda returns its k values and this gives k tensors.
     */
    public static List<Tensor> computeMulti(String name, Shape s, Function<List<IterVar>, List<Expr>> f) {
        return computeMulti(name, s, null, f);
    }

    /** {@link #computeMulti(String, Shape, Function)} with named axes (null for the default names). */
    public static List<Tensor> computeMulti(
            String name, Shape s, AxisNames names, Function<List<IterVar>, List<Expr>> f) {
        return SpatialAxes.build(name, "", s, names, f).outputs();
    }

    // ---- reductions -------------------------------------------------------------------------

    /** A reduce axis over {@code [0, extent)}. */
    public static IterVar reduceAxis(long extent, String name) {
        return reduceAxis(0, extent, name);
    }

    /** A reduce axis over {@code [min, min + extent)}; both ends must fit int32. */
    public static IterVar reduceAxis(long min, long extent, String name) {
        AxisNames.requireIdentifier("reduceAxis", name);
        if (extent <= 0) throw new KilnException("reduce axis '" + name + "' has a non-positive extent " + extent);
        if (min < Integer.MIN_VALUE || min + extent - 1 > Integer.MAX_VALUE || extent > Integer.MAX_VALUE) {
            throw new KilnException("reduce axis '" + name + "' over [" + min + ", " + min + " + " + extent
                    + ") does not fit int32 indices");
        }
        return new IterVar(name, new Range(IntImm.i32(min), IntImm.i32(extent)), IterVar.Kind.REDUCE);
    }

    public static Expr sum(IterVar axis, Expr body) {
        return reduce(Reducer::sum, one(axis), body, null);
    }

    public static Expr sum(List<IterVar> axes, Expr body) {
        return reduce(Reducer::sum, axes, body, null);
    }
    /** Sum over the points of {@code axes} where {@code where} holds. */
    public static Expr sum(List<IterVar> axes, Expr body, Expr where) {
        return reduce(Reducer::sum, axes, body, where);
    }
    /** Sum over a fresh axis {@code [0, extent)} handed to the lambda. */
    public static Expr sum(long extent, Function<IterVar, Expr> body) {
        return reduce(Reducer::sum, extent, body);
    }
    /** Sum over two fresh axes. */
    public static Expr sum(long e1, long e2, BiFunction<IterVar, IterVar, Expr> body) {
        return reduce(Reducer::sum, e1, e2, body);
    }

    public static Expr max(IterVar axis, Expr body) {
        return reduce(Reducer::max, one(axis), body, null);
    }

    public static Expr max(List<IterVar> axes, Expr body) {
        return reduce(Reducer::max, axes, body, null);
    }

    public static Expr max(List<IterVar> axes, Expr body, Expr where) {
        return reduce(Reducer::max, axes, body, where);
    }

    public static Expr max(long extent, Function<IterVar, Expr> body) {
        return reduce(Reducer::max, extent, body);
    }

    public static Expr max(long e1, long e2, BiFunction<IterVar, IterVar, Expr> body) {
        return reduce(Reducer::max, e1, e2, body);
    }

    public static Expr min(IterVar axis, Expr body) {
        return reduce(Reducer::min, one(axis), body, null);
    }

    public static Expr min(List<IterVar> axes, Expr body) {
        return reduce(Reducer::min, axes, body, null);
    }

    public static Expr min(List<IterVar> axes, Expr body, Expr where) {
        return reduce(Reducer::min, axes, body, where);
    }

    public static Expr min(long extent, Function<IterVar, Expr> body) {
        return reduce(Reducer::min, extent, body);
    }

    public static Expr prod(IterVar axis, Expr body) {
        return reduce(Reducer::prod, one(axis), body, null);
    }

    public static Expr prod(List<IterVar> axes, Expr body) {
        return reduce(Reducer::prod, axes, body, null);
    }

    public static Expr prod(long extent, Function<IterVar, Expr> body) {
        return reduce(Reducer::prod, extent, body);
    }

    /** Applies a single-value reducer chosen by the body's dtype. */
    public static Expr reduce(Function<DType, Reducer> reducer, List<IterVar> axes, Expr body, Expr where) {
        if (reducer == null) throw new KilnException("reduce: the reducer is null");
        if (axes == null) throw new KilnException("reduce: the list of reduce axes is null");
        for (int a = 0; a < axes.size(); a++) {
            if (axes.get(a) == null)
                throw new KilnException("reduce: reduce axis " + a + " of " + axes.size() + " is null");
        }
        String over = axes.stream().map(IterVar::name).toList().toString();
        if (body == null) throw new KilnException("reduce over " + over + ": the body is null");
        Reducer r = reducer.apply(body.dtype());
        if (r == null)
            throw new KilnException("reduce over " + over + ": the reducer function gave null for " + body.dtype());
        return r.reduce(body, axes, where == null ? IntImm.bool(true) : where);
    }

    private static Expr reduce(Function<DType, Reducer> reducer, long extent, Function<IterVar, Expr> body) {
        IterVar k = reduceAxis(extent, "r");
        if (body == null) throw new KilnException("reduce over 'r': the body lambda is null");
        return reduce(reducer, List.of(k), body.apply(k), null);
    }

    private static Expr reduce(
            Function<DType, Reducer> reducer, long e1, long e2, BiFunction<IterVar, IterVar, Expr> body) {
        IterVar k1 = reduceAxis(e1, "r0");
        IterVar k2 = reduceAxis(e2, "r1");
        if (body == null) throw new KilnException("reduce over 'r0', 'r1': the body lambda is null");
        return reduce(reducer, List.of(k1, k2), body.apply(k1, k2), null);
    }

    private static List<IterVar> one(IterVar axis) {
        if (axis == null) throw new KilnException("reduce: the reduce axis is null");
        return List.of(axis);
    }

    // ---- constants --------------------------------------------------------------------------

    public static Expr f32(double v) {
        return new FloatImm(DType.FLOAT32, v);
    }

    public static Expr f64(double v) {
        return new FloatImm(DType.FLOAT64, v);
    }

    public static Expr i32(long v) {
        return new IntImm(DType.INT32, v);
    }

    public static Expr i64(long v) {
        return new IntImm(DType.INT64, v);
    }

    public static Expr bool(boolean v) {
        return IntImm.bool(v);
    }

    /** A constant of any type; integer types need an integral value. */
    public static Expr constant(DType t, double v) {
        return dev.kiln.ir.Literals.of(t, v);
    }

    // ---- elementwise ------------------------------------------------------------------------

    public static Expr select(Expr cond, Expr t, Expr f) {
        return new Select(cond, t, f);
    }

    /** Alias of {@link #select}, as in TVM. */
    public static Expr ifThenElse(Expr cond, Expr t, Expr f) {
        return new Select(cond, t, f);
    }

    public static Expr cast(DType t, Expr e) {
        if (e == null) throw new KilnException("cast to " + t + ": the value is null");
        return e.cast(t);
    }

    /** The conjunction of the conditions ({@code true} if none). */
    public static Expr all(Expr... conds) {
        Expr out = null;
        if (conds == null) throw new KilnException("all: the array of conditions is null");
        for (int k = 0; k < conds.length; k++) {
            Expr c = conds[k];
            if (c == null) throw new KilnException("all: condition " + k + " of " + conds.length + " is null");
            out = out == null ? c : out.and(c);
        }
        return out == null ? IntImm.bool(true) : out;
    }

    public static Expr minimum(Expr a, Expr b) {
        return new dev.kiln.ir.Binary(dev.kiln.ir.BinaryOp.MIN, a, b);
    }

    public static Expr maximum(Expr a, Expr b) {
        return new dev.kiln.ir.Binary(dev.kiln.ir.BinaryOp.MAX, a, b);
    }

    public static Expr exp(Expr x) {
        return call(Intrinsic.EXP, x);
    }

    public static Expr log(Expr x) {
        return call(Intrinsic.LOG, x);
    }

    public static Expr sqrt(Expr x) {
        return call(Intrinsic.SQRT, x);
    }

    public static Expr rsqrt(Expr x) {
        return call(Intrinsic.RSQRT, x);
    }

    public static Expr tanh(Expr x) {
        return call(Intrinsic.TANH, x);
    }

    public static Expr sigmoid(Expr x) {
        return call(Intrinsic.SIGMOID, x);
    }

    public static Expr erf(Expr x) {
        return call(Intrinsic.ERF, x);
    }

    public static Expr pow(Expr x, Expr y) {
        return call(Intrinsic.POW, x, y);
    }

    public static Expr abs(Expr x) {
        return call(Intrinsic.ABS, x);
    }

    public static Expr floor(Expr x) {
        return call(Intrinsic.FLOOR, x);
    }

    public static Expr ceil(Expr x) {
        return call(Intrinsic.CEIL, x);
    }

    /** {@code a / b} correctly rounded on every target, fast-math ones too ({@link Intrinsic#EXACT_DIV}). */
    public static Expr exactDiv(Expr a, Expr b) {
        return call(Intrinsic.EXACT_DIV, a, b);
    }

    public static Expr round(Expr x) {
        return call(Intrinsic.ROUND, x);
    }

    public static Expr fma(Expr a, Expr b, Expr c) {
        return call(Intrinsic.FMA, a, b, c);
    }

    private static Expr call(Intrinsic fn, Expr... args) {
        return new Call(fn, Arrays.asList(args));
    }
}
