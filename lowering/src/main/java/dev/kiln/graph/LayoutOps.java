package dev.kiln.graph;

import static dev.kiln.graph.OpPattern.BROADCAST;
import static dev.kiln.graph.OpPattern.INJECTIVE;

import dev.kiln.nn.Indexing;
import dev.kiln.nn.Layout;
import dev.kiln.nn.Operator;
import dev.kiln.te.Tensor;
import java.util.List;

/**
 * The layout and indexing operators of the graph: reshape, transpose, strided slice, concat, take (a
 * gather with run-time indices), where and broadcast_to.
 *
 * <p>A family of {@link Op}'s records: {@code Op} extends this interface, so its records are named
 * {@code Op.Reshape}, {@code Op.Take}, ... as if they were declared in it (member types are inherited). Sealed,
 * with {@code Op} its only subtype: it has no members but the records, and nothing else implements it.
 */
public sealed interface LayoutOps permits Op {
    /** The same elements in row-major order under a new shape (one extent may be -1). */
    @Operator("The same elements in row-major order under a new shape (one extent may be -1).")
    @OpSpec(kind = "reshape", arity = 1, pattern = INJECTIVE)
    record Reshape(List<Long> shape) implements Op {
        public Reshape {
            shape = List.copyOf(shape);
        }

        public Tensor build(List<Tensor> in) {
            return Layout.reshape(
                    in.get(0), shape.stream().mapToLong(Long::longValue).toArray());
        }

        public String attrs() {
            return shape.toString();
        }
    }

    /** Permutes the axes: output axis d is input axis perm[d]. */
    @Operator("Permutes the axes: output axis d is input axis perm[d].")
    @OpSpec(kind = "transpose", arity = 1, pattern = INJECTIVE)
    record Transpose(List<Integer> perm) implements Op {
        public Transpose {
            perm = List.copyOf(perm);
        }

        public Tensor build(List<Tensor> in) {
            return Layout.transpose(
                    in.get(0), perm.stream().mapToInt(Integer::intValue).toArray());
        }

        public String attrs() {
            return perm.toString();
        }
    }

    /**
     * Strided slice: {@code size[d]} elements of axis d from {@code begin[d]} in steps of {@code step[d]}
     * (the whole tensor in steps of 1 is an identity, which {@code RemoveIdentities} drops unless it
     * is a graph output: the ONNX importer gives one value a second output name with such a copy).
     */
    @Operator("`size[d]` elements of axis d from `begin[d]` in steps of `step[d]`.")
    @OpSpec(kind = "strided_slice", arity = 1, pattern = INJECTIVE)
    record StridedSlice(List<Long> begin, List<Long> step, List<Long> size) implements Op {
        public StridedSlice {
            begin = List.copyOf(begin);
            step = List.copyOf(step);
            size = List.copyOf(size);
        }

        public Tensor build(List<Tensor> in) {
            return Layout.stridedSlice(in.get(0), longs(begin), longs(step), longs(size));
        }

        public String attrs() {
            return "begin=" + begin + " step=" + step + " size=" + size;
        }

        private static long[] longs(List<Long> l) {
            return l.stream().mapToLong(Long::longValue).toArray();
        }
    }

    /** Joins its inputs along {@code axis}. */
    @Operator("Joins its inputs along `axis`.")
    @OpSpec(kind = "concat", arity = -1, pattern = INJECTIVE)
    record Concat(int axis) implements Op {
        public Tensor build(List<Tensor> in) {
            return Layout.concat(axis, in.toArray(Tensor[]::new));
        }

        public String attrs() {
            return "axis=" + axis;
        }
    }

    /** Gather along {@code axis} with indices computed at run time: inputs data, indices. */
    @Operator("Gather along `axis` with indices computed at run time: inputs data, indices.")
    @OpSpec(kind = "take", arity = 2, pattern = INJECTIVE)
    record Take(int axis) implements Op {
        public Tensor build(List<Tensor> in) {
            return Indexing.take(in.get(0), in.get(1), axis);
        }

        public String attrs() {
            return "axis=" + axis;
        }
    }

    /** {@code cond ? x : y} with broadcasting: inputs cond (bool), x, y. */
    @Operator("`cond ? x : y` with broadcasting: inputs cond (bool), x, y.")
    @OpSpec(kind = "where", arity = 3, pattern = BROADCAST)
    record Where() implements Op {
        public Tensor build(List<Tensor> in) {
            return Indexing.where(in.get(0), in.get(1), in.get(2));
        }
    }

    /** The input broadcast to {@code shape} (numpy rules; ONNX Expand). */
    @Operator("The input broadcast to `shape` (numpy rules; ONNX Expand).")
    @OpSpec(kind = "broadcast_to", arity = 1, pattern = BROADCAST)
    record BroadcastTo(List<Long> shape) implements Op {
        public BroadcastTo {
            shape = List.copyOf(shape);
        }

        public Tensor build(List<Tensor> in) {
            return Indexing.broadcastTo(
                    in.get(0), shape.stream().mapToLong(Long::longValue).toArray());
        }

        public String attrs() {
            return shape.toString();
        }
    }
}
