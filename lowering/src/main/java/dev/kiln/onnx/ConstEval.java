package dev.kiln.onnx;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.util.Arrays;
import java.util.List;

/** Operators evaluated on constants at import (shape arithmetic; weights that need no kernel). */
final class ConstEval {
    private ConstEval() {}

    /** numpy broadcasting of two shapes; {@code what} names the operator in the error. */
    static long[] broadcastShape(long[] a, long[] b, String what) {
        int r = Math.max(a.length, b.length);
        long[] out = new long[r];
        for (int d = 0; d < r; d++) {
            long ea = d < r - a.length ? 1 : a[d - (r - a.length)];
            long eb = d < r - b.length ? 1 : b[d - (r - b.length)];
            if (ea != eb && ea != 1 && eb != 1) {
                throw new KilnException(
                        what + ": shapes " + Arrays.toString(a) + " and " + Arrays.toString(b) + " do not broadcast");
            }
            out[d] = Math.max(ea, eb);
        }
        return out;
    }

    /** For each element of {@code out}, the flat position in a tensor of {@code shape} broadcast to it. */
    static int[] broadcastSource(long[] shape, long[] out) {
        int n = (int) Const.count(out), r = out.length, off = r - shape.length;
        long[] strides = NDArray.rowMajorStrides(shape);
        int[] src = new int[n];
        long[] idx = new long[r];
        for (int i = 0; i < n; i++) {
            long p = 0;
            for (int d = 0; d < shape.length; d++) if (shape[d] != 1) p += idx[d + off] * strides[d];
            src[i] = (int) p;
            for (int d = r - 1; d >= 0 && ++idx[d] == out[d]; d--) idx[d] = 0;
        }
        return src;
    }

    static Const broadcastTo(Const c, long[] shape, String what) {
        long[] out = broadcastShape(c.shape(), shape, what);
        if (!Arrays.equals(out, shape)) {
            throw new KilnException(what + " of shape " + Arrays.toString(c.shape()) + " does not broadcast to "
                    + Arrays.toString(shape));
        }
        return c.gather(broadcastSource(c.shape(), shape), shape);
    }

    static Const binary(String op, Const a, Const b) {
        long[] out = broadcastShape(a.shape(), b.shape(), op);
        int[] sa = broadcastSource(a.shape(), out), sb = broadcastSource(b.shape(), out);
        int n = sa.length;
        if (MathOps.LOGIC.containsKey(op)) {
            if (a.isFloat() != b.isFloat()) throw new KilnException(op + " on constants of different types");
            long[] l = new long[n];
            for (int i = 0; i < n; i++) {
                boolean r;
                if (a.isFloat()) {
                    double x = a.get(sa[i]), y = b.get(sb[i]);
                    r = compare(op, Double.compare(x, y), Double.isNaN(x) || Double.isNaN(y));
                } else {
                    long x = a.getLong(sa[i]), y = b.getLong(sb[i]);
                    r = switch (op) {
                        case "And" -> x != 0 && y != 0;
                        case "Or" -> x != 0 || y != 0;
                        case "Xor" -> (x != 0) != (y != 0);
                        default -> compare(op, Long.compare(x, y), false);
                    };
                }
                l[i] = r ? 1 : 0;
            }
            return Const.ofInts(DType.BOOL, l, out);
        }
        if (a.isFloat() || b.isFloat()) {
            float[] f = new float[n];
            for (int i = 0; i < n; i++) {
                double x = a.get(sa[i]), y = b.get(sb[i]);
                f[i] = (float)
                        switch (op) {
                            case "Add" -> x + y;
                            case "Sub" -> x - y;
                            case "Mul" -> x * y;
                            case "Div" -> x / y;
                            case "Pow" -> Math.pow(x, y);
                            case "Max" -> Math.max(x, y);
                            case "Min" -> Math.min(x, y);
                            default -> throw new KilnException("cannot fold " + op + " on constants");
                        };
            }
            return Const.ofFloats(f, out);
        }
        long[] l = new long[n];
        for (int i = 0; i < n; i++) {
            long x = a.getLong(sa[i]), y = b.getLong(sb[i]);
            l[i] = switch (op) {
                case "Add" -> x + y;
                case "Sub" -> x - y;
                case "Mul" -> x * y;
                case "Div" -> {
                    if (y == 0) throw new KilnException("integer division by zero in a constant");
                    yield x / y;
                }
                case "Pow" -> (long) Math.pow(x, y);
                case "Max" -> Math.max(x, y);
                case "Min" -> Math.min(x, y);
                default -> throw new KilnException("cannot fold " + op + " on constants");
            };
        }
        return Const.ofLongs(l, out);
    }

    /** A comparison from the sign of {@code x - y}; false whenever a NaN is involved (IEEE 754). */
    private static boolean compare(String op, int sign, boolean nan) {
        if (nan) return false;
        return switch (op) {
            case "Equal" -> sign == 0;
            case "Less" -> sign < 0;
            case "LessOrEqual" -> sign <= 0;
            case "Greater" -> sign > 0;
            case "GreaterOrEqual" -> sign >= 0;
            default -> throw new KilnException("cannot fold " + op + " on constants");
        };
    }

    /** Strided slice: {@code size[d]} elements of axis d from {@code begin[d]} in steps of {@code step[d]}. */
    static Const slice(Const c, long[] begin, long[] step, long[] size) {
        long[] strides = NDArray.rowMajorStrides(c.shape());
        int n = (int) Const.count(size), r = size.length;
        int[] src = new int[n];
        long[] idx = new long[r];
        for (int i = 0; i < n; i++) {
            long p = 0;
            for (int d = 0; d < r; d++) p += (begin[d] + idx[d] * step[d]) * strides[d];
            src[i] = (int) p;
            for (int d = r - 1; d >= 0 && ++idx[d] == size[d]; d--) idx[d] = 0;
        }
        return c.gather(src, size);
    }

    static Const concat(List<Const> parts, int axis) {
        long[] shape = parts.getFirst().shape();
        long total = 0;
        boolean floats = false;
        for (Const p : parts) {
            long[] ps = p.shape();
            for (int d = 0; d < shape.length; d++) {
                if (ps.length != shape.length || d != axis && ps[d] != shape[d]) {
                    throw new KilnException("cannot concatenate " + Arrays.toString(ps) + " to "
                            + Arrays.toString(shape) + " along axis " + axis);
                }
            }
            total += p.shape()[axis];
            floats |= p.isFloat();
        }
        shape[axis] = total;
        long outer = 1, inner = 1;
        for (int d = 0; d < axis; d++) outer *= shape[d];
        for (int d = axis + 1; d < shape.length; d++) inner *= shape[d];
        int n = (int) Const.count(shape), i = 0;
        float[] f = floats ? new float[n] : null;
        long[] l = floats ? null : new long[n];
        for (long o = 0; o < outer; o++) {
            for (Const p : parts) {
                long chunk = p.shape()[axis] * inner;
                for (long j = 0; j < chunk; j++, i++) {
                    int s = (int) (o * chunk + j);
                    if (floats) f[i] = (float) p.get(s);
                    else l[i] = p.getLong(s);
                }
            }
        }
        return floats ? Const.ofFloats(f, shape) : Const.ofLongs(l, shape);
    }

    /** numpy's take along {@code axis} with integer indices of any shape (negative ones count from the end). */
    static Const gather(Const data, Const indices, int axis) {
        long[] ds = data.shape(), is = indices.shape();
        long[] out = new long[ds.length - 1 + is.length];
        int k = 0;
        for (int d = 0; d < axis; d++) out[k++] = ds[d];
        for (long e : is) out[k++] = e;
        for (int d = axis + 1; d < ds.length; d++) out[k++] = ds[d];
        long outer = 1, inner = 1;
        for (int d = 0; d < axis; d++) outer *= ds[d];
        for (int d = axis + 1; d < ds.length; d++) inner *= ds[d];
        long[] idx = indices.toLongs("indices");
        int[] src = new int[(int) Const.count(out)];
        int i = 0;
        for (long o = 0; o < outer; o++) {
            for (long x : idx) {
                long j = x < 0 ? x + ds[axis] : x;
                if (j < 0 || j >= ds[axis])
                    throw new KilnException("index " + x + " is out of range for an axis of extent " + ds[axis]);
                for (long e = 0; e < inner; e++) src[i++] = (int) ((o * ds[axis] + j) * inner + e);
            }
        }
        return data.gather(src, out);
    }
}
