package dev.kiln.interp;

import static dev.kiln.interp.MemoryNodes.F32;
import static dev.kiln.interp.MemoryNodes.F64;
import static dev.kiln.interp.MemoryNodes.I16;
import static dev.kiln.interp.MemoryNodes.I32;
import static dev.kiln.interp.MemoryNodes.I64;
import static dev.kiln.interp.MemoryNodes.I8;

import dev.kiln.ir.DType;
import java.lang.foreign.MemorySegment;

/**
 * The innermost loop of a {@link MemoryNodes.ReductionNest} whose term is one load or the product of two
 * ({@code acc += x[i(v)] * w[j(v)]}, every convolution's and matmul's), run as one Java loop: each operand's index
 * is computed once at the loop's start and then moved by a table of its changes along the loop variable (a stride,
 * or a packed layout's {@code floordiv(rc, 4) * 64 + floormod(rc, 4)}), with no node evaluated per iteration. Each
 * step rounds or wraps exactly as the accumulation node does. An index outside its buffer hands the rest of the loop
 * to that node, which reports it as before.
 */
final class DotNodes {
    private DotNodes() {}

    /** What a term's operand reads: a rank-1 buffer element, its index at the loop's start and its changes. */
    static final class Operand {
        final int buf;
        final DType dtype;
        final LongNode start;
        final long[] delta;
        final int indexShift;
        final long extent;
        final long stride;

        Operand(int buf, DType dtype, LongNode start, long[] delta, int indexShift, long extent, long stride) {
            this.buf = buf;
            this.dtype = dtype;
            this.start = start;
            this.delta = delta;
            this.indexShift = indexShift;
            this.extent = extent;
            this.stride = stride;
        }

        /** The element index at step {@code i}, or -1 when it is outside the buffer. */
        long index(long first, int i) {
            long x = IntNodes.wrap(first + delta[i], indexShift, false);
            return x < 0 || x >= extent ? -1 : x * stride;
        }

        long intAt(MemorySegment s, long x) {
            return switch (dtype) {
                case INT8 -> s.get(I8, x);
                case UINT8 -> s.get(I8, x) & 0xFF;
                case INT16 -> s.get(I16, x << 1);
                case INT32 -> s.get(I32, x << 2);
                default -> s.get(I64, x << 3);
            };
        }

        double floatAt(MemorySegment s, long x) {
            return dtype == DType.FLOAT32 ? s.get(F32, x << 2) : s.get(F64, x << 3);
        }
    }

    /**
     * {@code for v in [min, min + n): acc += term}: {@code x}, or {@code x * y} ({@code y} not null); {@code
     * f32Product}: a float64 accumulator's float32 product ({@code (double) (float) (x * y)}, the reference's wide
     * sum of float32 terms). {@code body} is the accumulation node, run for the rest of the loop once an index
     * leaves its buffer.
     */
    static final class DotLoop extends ExecNode {
        final int slot;
        final long min;
        final int n;
        final int acc;
        final MemoryNodes.Accumulator type;
        final int accShift;
        final Operand x;
        final Operand y;
        final boolean f32Product;
        final ExecNode body;

        DotLoop(
                int slot,
                long min,
                int n,
                int acc,
                MemoryNodes.Accumulator type,
                Operand x,
                Operand y,
                boolean f32Product,
                ExecNode body) {
            this.slot = slot;
            this.min = min;
            this.n = n;
            this.acc = acc;
            this.type = type;
            this.accShift = type == MemoryNodes.Accumulator.I32 ? 32 : 0;
            this.x = x;
            this.y = y;
            this.f32Product = f32Product;
            this.body = body;
        }

        @Override
        void run(Frame f) {
            long[] ints = f.ints;
            ints[slot] = min;
            long fx = x.start.eval(f);
            long fy = y == null ? 0 : y.start.eval(f);
            MemorySegment sx = f.bufs[x.buf];
            MemorySegment sy = y == null ? null : f.bufs[y.buf];
            int i = 0;
            switch (type) {
                case I32, I64 -> {
                    long s = ints[acc];
                    for (; i < n; i++) {
                        long ox = x.index(fx, i);
                        long oy = y == null ? 0 : y.index(fy, i);
                        if (ox < 0 || oy < 0) break;
                        long v = x.intAt(sx, ox);
                        s += y == null ? v : v * y.intAt(sy, oy);
                    }
                    ints[acc] = IntNodes.wrap(s, accShift, false);
                }
                case F64 -> {
                    double s = f.floats[acc];
                    for (; i < n; i++) {
                        long ox = x.index(fx, i);
                        long oy = y == null ? 0 : y.index(fy, i);
                        if (ox < 0 || oy < 0) break;
                        double v = x.floatAt(sx, ox);
                        if (y != null) v = f32Product ? (float) v * (float) y.floatAt(sy, oy) : v * y.floatAt(sy, oy);
                        s += v;
                    }
                    f.floats[acc] = s;
                }
                case F32 -> {
                    float s = (float) f.floats[acc];
                    for (; i < n; i++) {
                        long ox = x.index(fx, i);
                        long oy = y == null ? 0 : y.index(fy, i);
                        if (ox < 0 || oy < 0) break;
                        float v = (float) x.floatAt(sx, ox);
                        s += y == null ? v : v * (float) y.floatAt(sy, oy);
                    }
                    f.floats[acc] = s;
                }
            }
            for (; i < n; i++) { // an index left its buffer: the accumulation node reports it
                ints[slot] = min + i;
                body.run(f);
            }
        }
    }
}
