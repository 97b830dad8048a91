package dev.kiln.interp;

import dev.kiln.runtime.Numerics;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Loads and stores, one class per element type, in the storage formats of
 * {@link dev.kiln.runtime.NDArray} (native byte order; float16/bfloat16 as 16-bit patterns; bool as
 * a byte, read as {@code byte != 0}). {@code buf} is the buffer's slot in {@link Frame#bufs}.
 */
final class MemoryNodes {
    private MemoryNodes() {}

    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
    static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;
    static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED;
    static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    static final ValueLayout.OfByte I8 = ValueLayout.JAVA_BYTE;

    // ---- loads ----------------------------------------------------------------------------------

    static final class LoadF32 extends DoubleNode {
        final int buf;
        final Access at;

        LoadF32(int buf, Access at) {
            this.buf = buf;
            this.at = at;
        }

        @Override
        double eval(Frame f) {
            return f.bufs[buf].get(F32, at.offset(f) << 2);
        }
    }

    static final class LoadF64 extends DoubleNode {
        final int buf;
        final Access at;

        LoadF64(int buf, Access at) {
            this.buf = buf;
            this.at = at;
        }

        @Override
        double eval(Frame f) {
            return f.bufs[buf].get(F64, at.offset(f) << 3);
        }
    }

    static final class LoadF16 extends DoubleNode {
        final int buf;
        final Access at;

        LoadF16(int buf, Access at) {
            this.buf = buf;
            this.at = at;
        }

        @Override
        double eval(Frame f) {
            return Numerics.fromFloat16Bits(f.bufs[buf].get(I16, at.offset(f) << 1));
        }
    }

    static final class LoadBF16 extends DoubleNode {
        final int buf;
        final Access at;

        LoadBF16(int buf, Access at) {
            this.buf = buf;
            this.at = at;
        }

        @Override
        double eval(Frame f) {
            return Numerics.fromBFloat16Bits(f.bufs[buf].get(I16, at.offset(f) << 1));
        }
    }

    static final class LoadI8 extends LongNode {
        final int buf;
        final Access at;

        LoadI8(int buf, Access at) {
            this.buf = buf;
            this.at = at;
        }

        @Override
        long eval(Frame f) {
            return f.bufs[buf].get(I8, at.offset(f));
        }
    }

    static final class LoadU8 extends LongNode {
        final int buf;
        final Access at;

        LoadU8(int buf, Access at) {
            this.buf = buf;
            this.at = at;
        }

        @Override
        long eval(Frame f) {
            return f.bufs[buf].get(I8, at.offset(f)) & 0xFF;
        }
    }

    static final class LoadBool extends LongNode {
        final int buf;
        final Access at;

        LoadBool(int buf, Access at) {
            this.buf = buf;
            this.at = at;
        }

        @Override
        long eval(Frame f) {
            return f.bufs[buf].get(I8, at.offset(f)) != 0 ? 1 : 0;
        }
    }

    static final class LoadI16 extends LongNode {
        final int buf;
        final Access at;

        LoadI16(int buf, Access at) {
            this.buf = buf;
            this.at = at;
        }

        @Override
        long eval(Frame f) {
            return f.bufs[buf].get(I16, at.offset(f) << 1);
        }
    }

    static final class LoadI32 extends LongNode {
        final int buf;
        final Access at;

        LoadI32(int buf, Access at) {
            this.buf = buf;
            this.at = at;
        }

        @Override
        long eval(Frame f) {
            return f.bufs[buf].get(I32, at.offset(f) << 2);
        }
    }

    static final class LoadI64 extends LongNode {
        final int buf;
        final Access at;

        LoadI64(int buf, Access at) {
            this.buf = buf;
            this.at = at;
        }

        @Override
        long eval(Frame f) {
            return f.bufs[buf].get(I64, at.offset(f) << 3);
        }
    }

    // ---- stores ---------------------------------------------------------------------------------

    static final class StoreF32 extends ExecNode {
        final int buf;
        final Access at;
        final DoubleNode value;

        StoreF32(int buf, Access at, DoubleNode value) {
            this.buf = buf;
            this.at = at;
            this.value = value;
        }

        @Override
        void run(Frame f) {
            long off = at.offset(f);
            float v = (float) value.eval(f);
            f.bufs[buf].set(F32, off << 2, v);
        }
    }

    /** {@code B[idx] = B[idx] + value} for float32: the address is computed once. */
    static final class AddToF32 extends ExecNode {
        final int buf;
        final Access at;
        final DoubleNode value;

        AddToF32(int buf, Access at, DoubleNode value) {
            this.buf = buf;
            this.at = at;
            this.value = value;
        }

        @Override
        void run(Frame f) {
            long off = at.offset(f) << 2;
            MemorySegment s = f.bufs[buf];
            float old = s.get(F32, off);
            float v = old + (float) value.eval(f);
            s.set(F32, off, v);
        }
    }

    /** The types a {@link ReductionNest} holds in a frame slot: floats in {@code floats}, integers in {@code ints}. */
    enum Accumulator {
        F32,
        F64,
        I32,
        I64;

        boolean isFloat() {
            return this == F32 || this == F64;
        }
    }

    /**
     * A loop nest whose one statement accumulates into {@code B[I]} ({@code Compiler.reductionNest}): {@code B[I]} is
     * held in frame slot {@code acc} while {@code loops} run.
     */
    static final class ReductionNest extends ExecNode {
        final int buf;
        final Access at;
        final int acc;
        final Accumulator type;
        final ExecNode loops;

        ReductionNest(int buf, Access at, int acc, Accumulator type, ExecNode loops) {
            this.buf = buf;
            this.at = at;
            this.acc = acc;
            this.type = type;
            this.loops = loops;
        }

        @Override
        void run(Frame f) {
            long off = at.offset(f);
            MemorySegment s = f.bufs[buf];
            switch (type) {
                case F32 -> f.floats[acc] = s.get(F32, off << 2);
                case F64 -> f.floats[acc] = s.get(F64, off << 3);
                case I32 -> f.ints[acc] = s.get(I32, off << 2);
                case I64 -> f.ints[acc] = s.get(I64, off << 3);
            }
            loops.run(f);
            switch (type) {
                case F32 -> s.set(F32, off << 2, (float) f.floats[acc]);
                case F64 -> s.set(F64, off << 3, f.floats[acc]);
                case I32 -> s.set(I32, off << 2, (int) f.ints[acc]);
                case I64 -> s.set(I64, off << 3, f.ints[acc]);
            }
        }
    }

    /** {@code acc = acc + value} in a float accumulator's type: the body of a {@link ReductionNest}. */
    static final class Accumulate extends ExecNode {
        final int acc;
        final DoubleNode value;
        final boolean f32;

        Accumulate(int acc, DoubleNode value, boolean f32) {
            this.acc = acc;
            this.value = value;
            this.f32 = f32;
        }

        @Override
        void run(Frame f) {
            double[] floats = f.floats;
            if (f32) floats[acc] = (float) floats[acc] + (float) value.eval(f);
            else floats[acc] = floats[acc] + value.eval(f);
        }
    }

    /** {@code acc = acc + value} wrapped to an integer accumulator's width: the body of a {@link ReductionNest}. */
    static final class AccumulateLong extends ExecNode {
        final int acc;
        final LongNode value;
        final int sh;

        AccumulateLong(int acc, LongNode value, int sh) {
            this.acc = acc;
            this.value = value;
            this.sh = sh;
        }

        @Override
        void run(Frame f) {
            long[] ints = f.ints;
            ints[acc] = IntNodes.wrap(ints[acc] + value.eval(f), sh, false);
        }
    }

    static final class StoreF64 extends ExecNode {
        final int buf;
        final Access at;
        final DoubleNode value;

        StoreF64(int buf, Access at, DoubleNode value) {
            this.buf = buf;
            this.at = at;
            this.value = value;
        }

        @Override
        void run(Frame f) {
            long off = at.offset(f);
            double v = value.eval(f);
            f.bufs[buf].set(F64, off << 3, v);
        }
    }

    static final class StoreF16 extends ExecNode {
        final int buf;
        final Access at;
        final DoubleNode value;

        StoreF16(int buf, Access at, DoubleNode value) {
            this.buf = buf;
            this.at = at;
            this.value = value;
        }

        @Override
        void run(Frame f) {
            long off = at.offset(f);
            short v = Numerics.toFloat16Bits(value.eval(f));
            f.bufs[buf].set(I16, off << 1, v);
        }
    }

    static final class StoreBF16 extends ExecNode {
        final int buf;
        final Access at;
        final DoubleNode value;

        StoreBF16(int buf, Access at, DoubleNode value) {
            this.buf = buf;
            this.at = at;
            this.value = value;
        }

        @Override
        void run(Frame f) {
            long off = at.offset(f);
            short v = Numerics.toBFloat16Bits(value.eval(f));
            f.bufs[buf].set(I16, off << 1, v);
        }
    }

    /** int8, uint8 and bool: the value is already in range, its low byte is stored. */
    static final class StoreI8 extends ExecNode {
        final int buf;
        final Access at;
        final LongNode value;

        StoreI8(int buf, Access at, LongNode value) {
            this.buf = buf;
            this.at = at;
            this.value = value;
        }

        @Override
        void run(Frame f) {
            long off = at.offset(f);
            byte v = (byte) value.eval(f);
            f.bufs[buf].set(I8, off, v);
        }
    }

    static final class StoreI16 extends ExecNode {
        final int buf;
        final Access at;
        final LongNode value;

        StoreI16(int buf, Access at, LongNode value) {
            this.buf = buf;
            this.at = at;
            this.value = value;
        }

        @Override
        void run(Frame f) {
            long off = at.offset(f);
            short v = (short) value.eval(f);
            f.bufs[buf].set(I16, off << 1, v);
        }
    }

    static final class StoreI32 extends ExecNode {
        final int buf;
        final Access at;
        final LongNode value;

        StoreI32(int buf, Access at, LongNode value) {
            this.buf = buf;
            this.at = at;
            this.value = value;
        }

        @Override
        void run(Frame f) {
            long off = at.offset(f);
            int v = (int) value.eval(f);
            f.bufs[buf].set(I32, off << 2, v);
        }
    }

    static final class StoreI64 extends ExecNode {
        final int buf;
        final Access at;
        final LongNode value;

        StoreI64(int buf, Access at, LongNode value) {
            this.buf = buf;
            this.at = at;
            this.value = value;
        }

        @Override
        void run(Frame f) {
            long off = at.offset(f);
            long v = value.eval(f);
            f.bufs[buf].set(I64, off << 3, v);
        }
    }

    /** Zero-filled scratch memory of an Allocate, made once per run and cleared on every entry. */
    static MemorySegment scratch(Frame f, int index, long bytes) {
        MemorySegment s = f.scratch[index];
        if (s == null) {
            s = f.arena.allocate(Math.max(bytes, 1), 64);
            f.scratch[index] = s;
        } else {
            s.fill((byte) 0);
        }
        return s;
    }
}
