package dev.kiln.onnx;

import dev.kiln.graph.Op;
import dev.kiln.graph.Value;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.Ref.ConstRef;
import dev.kiln.onnx.Ref.ValueRef;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import dev.kiln.onnx.proto.Onnx.TensorProto;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * Shape and data-movement operators. On constants they are evaluated at import (Shape, Gather,
 * Unsqueeze, Concat, ... of shape arithmetic fold away); on graph values they become reshape,
 * transpose, concat and strided-slice nodes.
 */
final class ShapeOps {
    private ShapeOps() {}

    /** Reshape, Flatten, Unsqueeze and Squeeze: the same elements under a new shape. */
    static void reshape(ImportContext ctx, NodeProto n) {
        Ref x = ctx.required(n, 0);
        long[] in = x.shape();
        long[] shape =
                switch (n.getOpType()) {
                    case "Reshape" -> {
                        Attrs a = new Attrs(n, Set.of("allowzero"));
                        yield reshapeTarget(
                                in, ctx.constant(n, 1, "shape").toLongs("shape"), a.getInt("allowzero", 0) != 0);
                    }
                    case "Flatten" -> {
                        Attrs a = new Attrs(n, Set.of("axis"));
                        long ax = a.getInt("axis", 1);
                        int axis = ax < 0 ? (int) ax + in.length : (int) ax;
                        if (axis < 0 || axis > in.length)
                            throw new KilnException("axis " + ax + " is out of range for rank " + in.length);
                        yield new long[] {
                            Const.count(Arrays.copyOf(in, axis)), Const.count(Arrays.copyOfRange(in, axis, in.length))
                        };
                    }
                    case "Unsqueeze" -> {
                        new Attrs(n, Set.of());
                        long[] axes = ctx.constant(n, 1, "axes").toLongs("axes");
                        int r = in.length + axes.length;
                        boolean[] unit = new boolean[r];
                        for (long a : axes) unit[NnOps.axis(a, r)] = true;
                        long[] s = new long[r];
                        for (int d = 0, j = 0; d < r; d++) s[d] = unit[d] ? 1 : in[j++];
                        yield s;
                    }
                    default -> { // Squeeze
                        new Attrs(n, Set.of());
                        boolean[] drop = new boolean[in.length];
                        if (ctx.input(n, 1) == null) {
                            for (int d = 0; d < in.length; d++) drop[d] = in[d] == 1;
                        } else {
                            for (long a : ctx.constant(n, 1, "axes").toLongs("axes")) {
                                int d = NnOps.axis(a, in.length);
                                if (in[d] != 1)
                                    throw new KilnException("axis " + a + " has extent " + in[d] + ", not 1");
                                drop[d] = true;
                            }
                        }
                        long[] s = new long[in.length];
                        int j = 0;
                        for (int d = 0; d < in.length; d++) if (!drop[d]) s[j++] = in[d];
                        yield Arrays.copyOf(s, j);
                    }
                };
        if (Const.count(shape) != Const.count(in)) {
            throw new KilnException("cannot reshape " + Arrays.toString(in) + " to " + Arrays.toString(shape));
        }
        if (x instanceof ConstRef c) {
            ctx.fold(n.getOutput(0), c.c().reshape(shape));
        } else if (ImportContext.isNhwc(x)) {
            ctx.emit(n.getOutput(0), new Op.Reshape(Arrays.stream(shape).boxed().toList()), null, ctx.plain(x));
        } else { // a view of the same value: no node until something needs ONNX's shape
            ctx.defineView(n.getOutput(0), ((ValueRef) x).value(), shape);
        }
    }

    private static long[] reshapeTarget(long[] in, long[] spec, boolean allowZero) {
        long[] s = spec.clone();
        int infer = -1;
        for (int d = 0; d < s.length; d++) {
            if (s[d] == 0 && !allowZero) {
                if (d >= in.length)
                    throw new KilnException("shape " + Arrays.toString(spec) + " copies axis " + d + " of a rank-"
                            + in.length + " input");
                s[d] = in[d];
            } else if (s[d] == -1) {
                if (infer >= 0) throw new KilnException("shape " + Arrays.toString(spec) + " has more than one -1");
                infer = d;
            } else if (s[d] < 0) {
                throw new KilnException("shape " + Arrays.toString(spec) + " has a negative extent");
            }
        }
        if (infer >= 0) {
            long known = 1;
            for (int d = 0; d < s.length; d++) if (d != infer) known *= s[d];
            if (known == 0 || Const.count(in) % known != 0) {
                throw new KilnException("cannot reshape " + Arrays.toString(in) + " to " + Arrays.toString(spec));
            }
            s[infer] = Const.count(in) / known;
        }
        return s;
    }

    static void transpose(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("perm"));
        Ref x = ctx.required(n, 0);
        int r = x.rank();
        long[] p = a.getInts("perm");
        int[] perm = new int[r];
        for (int d = 0; d < r; d++) perm[d] = p == null ? r - 1 - d : NnOps.axis(p[d], r);
        if (p != null && p.length != r)
            throw new KilnException("perm " + Arrays.toString(p) + " for a rank-" + r + " input");
        if (x instanceof ConstRef c) {
            ctx.fold(n.getOutput(0), c.c().transpose(perm));
            return;
        }
        // one transpose from the value's own layout: ONNX axis perm[d] sits at position pos[perm[d]]
        int[] layout = ImportContext.layoutOf(x);
        int[] pos = new int[r];
        for (int k = 0; k < r; k++) pos[layout[k]] = k;
        List<Integer> kp = new ArrayList<>();
        for (int d = 0; d < r; d++) kp.add(pos[perm[d]]);
        ctx.emit(n.getOutput(0), new Op.Transpose(kp), null, ctx.inLayout(x, layout));
    }

    static void concat(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("axis"));
        List<Ref> xs = new ArrayList<>();
        for (int i = 0; i < n.getInputCount(); i++) xs.add(ctx.required(n, i));
        int r = xs.getFirst().rank();
        int axis = NnOps.axis(a.getInt("axis", 0), r);
        if (xs.stream().allMatch(x -> x instanceof ConstRef)) {
            ctx.fold(
                    n.getOutput(0),
                    ConstEval.concat(xs.stream().map(x -> ((ConstRef) x).c()).toList(), axis));
            return;
        }
        boolean image = r == 4 && xs.stream().anyMatch(ImportContext::isNhwc);
        int[] layout = image ? ImportContext.NHWC : ImportContext.identity(r);
        int kAxis = 0;
        while (layout[kAxis] != axis) kAxis++;
        Value[] vs = xs.stream().map(x -> ctx.inLayout(x, layout)).toArray(Value[]::new);
        ctx.emit(n.getOutput(0), new Op.Concat(kAxis), layout, vs);
    }

    static void split(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("axis", "num_outputs", "split"));
        Ref x = ctx.required(n, 0);
        int axis = NnOps.axis(a.getInt("axis", 0), x.rank());
        long extent = x.shape()[axis];
        int outs = n.getOutputCount();
        long[] sizes;
        if (ctx.input(n, 1) != null) {
            sizes = ctx.constant(n, 1, "split").toLongs("split");
        } else if (a.getInts("split") != null) {
            sizes = a.getInts("split");
        } else {
            long parts = a.getInt("num_outputs", outs);
            long each = Math.ceilDiv(extent, parts);
            sizes = new long[(int) parts];
            for (int i = 0; i < parts; i++) sizes[i] = Math.max(0, Math.min(each, extent - i * each));
        }
        if (sizes.length != outs || Arrays.stream(sizes).sum() != extent) {
            throw new KilnException("split sizes " + Arrays.toString(sizes) + " do not cut an axis of extent " + extent
                    + " into " + outs + " outputs");
        }
        long start = 0;
        for (int i = 0; i < outs; i++) {
            long[] begin = new long[x.rank()], step = new long[x.rank()], size = x.shape();
            Arrays.fill(step, 1);
            begin[axis] = start;
            size[axis] = sizes[i];
            start += sizes[i];
            if (!n.getOutput(i).isEmpty()) sliceOf(ctx, x, n.getOutput(i), begin, step, size);
        }
    }

    static void slice(ImportContext ctx, NodeProto n) {
        new Attrs(n, Set.of());
        Ref x = ctx.required(n, 0);
        long[] shape = x.shape();
        int r = shape.length;
        long[] starts = ctx.constant(n, 1, "starts").toLongs("starts"),
                ends = ctx.constant(n, 2, "ends").toLongs("ends");
        long[] axes =
                ctx.input(n, 3) == null ? null : ctx.constant(n, 3, "axes").toLongs("axes");
        long[] steps =
                ctx.input(n, 4) == null ? null : ctx.constant(n, 4, "steps").toLongs("steps");
        long[] begin = new long[r], step = new long[r], size = shape.clone();
        Arrays.fill(step, 1);
        for (int i = 0; i < starts.length; i++) {
            int d = axes == null ? i : NnOps.axis(axes[i], r);
            long st = steps == null ? 1 : steps[i], dim = shape[d];
            if (st == 0) throw new KilnException("step 0 on axis " + d);
            long s = starts[i] < 0 ? starts[i] + dim : starts[i], e = ends[i] < 0 ? ends[i] + dim : ends[i];
            if (st > 0) {
                s = Math.clamp(s, 0, dim);
                e = Math.clamp(e, 0, dim);
                size[d] = Math.max(0, Math.ceilDiv(e - s, st));
            } else {
                s = Math.clamp(s, 0, dim - 1);
                e = Math.clamp(e, -1, dim - 1);
                size[d] = Math.max(0, Math.ceilDiv(s - e, -st));
            }
            if (size[d] == 0)
                throw new KilnException("the slice of axis " + d + " is empty; Kiln has no empty tensors");
            begin[d] = s;
            step[d] = st;
        }
        sliceOf(ctx, x, n.getOutput(0), begin, step, size);
    }

    private static void sliceOf(ImportContext ctx, Ref x, String out, long[] begin, long[] step, long[] size) {
        if (x instanceof ConstRef c) {
            ctx.fold(out, ConstEval.slice(c.c(), begin, step, size));
        } else {
            ctx.emit(out, new Op.StridedSlice(boxed(begin), boxed(step), boxed(size)), null, ctx.plain(x));
        }
    }

    static void gather(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("axis"));
        Ref data = ctx.required(n, 0);
        int axis = NnOps.axis(a.getInt("axis", 0), data.rank());
        if (!(ctx.required(n, 1)
                instanceof ConstRef)) { // indices computed at run time (token ids into an embedding table)
            Ref ix = ctx.required(n, 1);
            if (ix.rank() == 0) throw new KilnException("a scalar index computed at run time is not supported");
            ctx.emit(n.getOutput(0), new Op.Take(axis), null, ctx.plain(data), ctx.plain(ix));
            return;
        }
        Const idx = ctx.constant(n, 1, "indices");
        if (data instanceof ConstRef c) {
            ctx.fold(n.getOutput(0), ConstEval.gather(c.c(), idx, axis));
            return;
        }
        long[] ix = idx.toLongs("indices");
        long dim = data.shape()[axis];
        long first = ix.length == 0 ? 0 : (ix[0] < 0 ? ix[0] + dim : ix[0]);
        for (int i = 0; i < ix.length; i++) {
            long v = ix[i] < 0 ? ix[i] + dim : ix[i];
            if (v != first + i || v >= dim) {
                throw new KilnException("gathering from a computed tensor takes a run of consecutive indices, got "
                        + Arrays.toString(ix));
            }
        }
        if (idx.rank() > 1 || ix.length == 0)
            throw new KilnException("gathering from a computed tensor takes a scalar or a 1-D run of indices");
        long[] begin = new long[data.rank()], step = new long[data.rank()], size = data.shape();
        Arrays.fill(step, 1);
        begin[axis] = first;
        size[axis] = ix.length;
        Value s = ctx.g.node(
                ctx.fresh(n.getOutput(0) + "/slice"),
                new Op.StridedSlice(boxed(begin), boxed(step), boxed(size)),
                ctx.plain(data));
        long[] out = size.clone();
        if (idx.rank() == 0) { // a scalar index drops the axis
            out = new long[size.length - 1];
            for (int d = 0, j = 0; d < size.length; d++) if (d != axis) out[j++] = size[d];
        }
        ctx.emit(n.getOutput(0), new Op.Reshape(boxed(out)), null, s);
    }

    static void shape(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("end", "start"));
        long[] s = ctx.required(n, 0).shape();
        int r = s.length;
        long start = a.getInt("start", 0), end = a.getInt("end", r);
        start = Math.clamp(start < 0 ? start + r : start, 0, r);
        end = Math.clamp(end < 0 ? end + r : end, 0, r);
        long[] v = Arrays.copyOfRange(s, (int) start, (int) Math.max(start, end));
        ctx.fold(n.getOutput(0), Const.ofLongs(v, v.length));
    }

    static void constant(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("value", "value_float", "value_floats", "value_int", "value_ints"));
        Const c;
        if (a.has("value")) c = a.getTensor("value");
        else if (a.has("value_float")) c = Const.ofFloats(new float[] {(float) a.getFloat("value_float", 0)});
        else if (a.has("value_int")) c = Const.ofLongs(new long[] {a.getInt("value_int", 0)});
        else if (a.has("value_ints")) {
            long[] v = a.getInts("value_ints");
            c = Const.ofLongs(v, v.length);
        } else if (a.has("value_floats")) {
            List<Float> f = a.getFloats("value_floats");
            float[] v = new float[f.size()];
            for (int i = 0; i < v.length; i++) v[i] = f.get(i);
            c = Const.ofFloats(v, v.length);
        } else throw new KilnException("no value attribute (Kiln reads value, value_float(s), value_int(s))");
        ctx.fold(n.getOutput(0), c);
    }

    static void constantOfShape(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("value"));
        long[] shape = ctx.constant(n, 0, "shape").toLongs("shape");
        Const v = a.has("value") ? a.getTensor("value") : Const.ofFloats(new float[] {0f}, 1);
        ctx.fold(n.getOutput(0), ConstEval.broadcastTo(v.reshape(), shape, "value"));
    }

    /**
     * Cast: folded on constants; on graph values a cast node (float types are all float32 in Kiln,
     * so a cast between them is the value itself). Float to integer truncates toward zero.
     */
    static void cast(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("saturate", "to"));
        Ref x = ctx.required(n, 0);
        TensorProto.DataType to = TensorProto.DataType.forNumber((int) a.getInt("to", 0));
        boolean toFloat =
                switch (to) {
                    case FLOAT, DOUBLE, FLOAT16, BFLOAT16 -> true;
                    case INT64, INT32, INT16, INT8, UINT8, UINT16, UINT32, UINT64, BOOL -> false;
                    case null, default -> throw new KilnException("attribute 'to' = " + to + " is not supported");
                };
        if (x instanceof ConstRef c) {
            ctx.fold(n.getOutput(0), toFloat ? c.c().toFloat() : c.c().toLong().as(OnnxTypes.integer(to)));
            return;
        }
        DType from = ((ValueRef) x).value().dtype();
        DType target = toFloat ? DType.FLOAT32 : OnnxTypes.of(to.getNumber(), "attribute 'to'");
        if (from == target) {
            ctx.define(n.getOutput(0), x);
        } else if (ImportContext.isView(x)) {
            ctx.emitView(n.getOutput(0), new Op.Cast(target), x.shape(), ((ValueRef) x).value());
        } else {
            int[] layout = ImportContext.layoutOf(x);
            ctx.emit(n.getOutput(0), new Op.Cast(target), layout, ctx.inLayout(x, layout));
        }
    }

    static void identity(ImportContext ctx, NodeProto n) {
        new Attrs(n, n.getOpType().equals("Dropout") ? Set.of("seed") : Set.of());
        OnnxOps.outputsAtMost(n, 1, "Dropout's mask is not computed at inference");
        if (n.getOpType().equals("Dropout") && ctx.input(n, 2) != null) {
            Const training = ctx.constant(n, 2, "training_mode");
            if (training.scalar("training_mode") != 0)
                throw new KilnException("training_mode = true is not supported (inference only)");
        }
        ctx.define(n.getOutput(0), ctx.required(n, 0));
    }

    static List<Long> boxed(long[] v) {
        return Arrays.stream(v).boxed().toList();
    }
}
