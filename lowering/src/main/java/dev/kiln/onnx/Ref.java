package dev.kiln.onnx;

import dev.kiln.graph.Value;
import java.util.Arrays;

/** What an ONNX tensor name stands for during import: a constant known now, or a value of the Kiln graph. */
sealed interface Ref {

    /** The tensor's shape as ONNX sees it (NCHW for images). */
    long[] shape();

    default int rank() {
        return shape().length;
    }

    /** A constant, folded at import; {@code name} (an initializer's, or null) names its graph constant. */
    record ConstRef(Const c, String name) implements Ref {
        ConstRef(Const c) {
            this(c, null);
        }

        public long[] shape() {
            return c.shape();
        }
    }

    /**
     * A graph value whose axis k holds the ONNX tensor's axis {@code layout[k]} ({@code null}: the same
     * order). Image tensors read or written by convolutions and pools are kept NHWC, layout [0, 2, 3, 1].
     */
    record ValueRef(Value value, long[] shape, int[] layout) implements Ref {
        public ValueRef {
            shape = shape.clone();
            if (layout != null && isIdentity(layout)) layout = null;
        }

        public long[] shape() {
            return shape.clone();
        }

        static boolean isIdentity(int[] perm) {
            for (int i = 0; i < perm.length; i++) if (perm[i] != i) return false;
            return true;
        }

        @Override
        public String toString() {
            return value + (layout == null ? "" : " layout " + Arrays.toString(layout));
        }
    }
}
