package dev.kiln.autoschedule.feature;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.Var;
import java.util.ArrayList;
import java.util.List;

/**
 * The accesses one statement makes to one buffer: the store and every load of the same buffer,
 * each as the linear forms of its indices, and the touched region that the reuse and line
 * features are built from.
 */
final class BufferAccess {
    static final int READ = 1, WRITE = 2;

    final Buffer buffer;
    final long[] shape;
    final long[] strides;
    final int elementBytes;
    final List<Affine[]> indices = new ArrayList<>();
    int type;

    BufferAccess(Buffer buffer) {
        this.buffer = buffer;
        this.shape = constOr1(buffer, true);
        this.strides = constOr1(buffer, false);
        this.elementBytes = buffer.dtype().bytes();
    }

    private static long[] constOr1(Buffer b, boolean shape) {
        long[] out = new long[b.rank()];
        for (int d = 0; d < out.length; d++) {
            var e = shape ? b.shape().get(d) : b.strides().get(d);
            out[d] = e instanceof dev.kiln.ir.IntImm c ? Math.max(1, c.value()) : 1;
        }
        return out;
    }

    /** Whether {@code v} occurs in some index of some access. */
    boolean uses(Var v) {
        for (Affine[] idx : indices) for (Affine a : idx) if (a.uses(v)) return true;
        return false;
    }

    /**
     * The bounding box of all accesses under {@code ranges}, clamped to the buffer, as the extent
     * per dimension; returns the number of elements in it.
     */
    double region(Affine.Ranges ranges, long[] extentOut) {
        long[] r = new long[2];
        double elements = 1;
        for (int d = 0; d < shape.length; d++) {
            long lo = Long.MAX_VALUE, hi = Long.MIN_VALUE;
            for (Affine[] idx : indices) {
                idx[d].range(ranges, r);
                lo = Math.min(lo, r[0]);
                hi = Math.max(hi, r[1]);
            }
            long ext = Math.max(1, Math.min(shape[d], hi - lo + 1));
            if (extentOut != null) extentOut[d] = ext;
            elements *= ext;
        }
        return elements;
    }

    /**
     * How many elements apart two consecutive iterations of the loop of {@code v} access: for
     * each access, the coefficient of {@code v} in the last dimension that uses it times that
     * dimension's stride; the smallest over accesses. 0 when no index uses {@code v}.
     */
    double stride(Var v) {
        double best = Double.MAX_VALUE;
        boolean found = false;
        for (Affine[] idx : indices) {
            for (int d = idx.length - 1; d >= 0; d--) {
                double c = idx[d].coefficient(v);
                if (c != 0) {
                    found = true;
                    best = Math.min(best, c * strides[d]);
                    break;
                }
            }
        }
        return found ? best : 0;
    }

    /**
     * The bytes of the longest contiguous run in a region: the trailing dimensions the region
     * covers whole, times the region's extent in the first dimension it does not.
     */
    double contiguousBytes(long[] region) {
        double run = elementBytes;
        for (int d = shape.length - 1; d >= 0; d--) {
            boolean dense = d == shape.length - 1 ? strides[d] == 1 : strides[d] == strides[d + 1] * shape[d + 1];
            if (!dense) break;
            run *= region[d];
            if (region[d] != shape[d]) break;
        }
        return run;
    }
}
