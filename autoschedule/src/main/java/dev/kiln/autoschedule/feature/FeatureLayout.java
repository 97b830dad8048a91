package dev.kiln.autoschedule.feature;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The layout of one statement's feature vector: {@value #LENGTH} numbers in Ansor's five groups
 * and order (computation, buffer access, arithmetic-intensity curve, allocation, outer scope).
 * Continuous values are stored as {@code log2(1 + x)}; one-hot entries and {@code is_gpu} are 0
 * or 1. The offsets below name the first entry of each group or block; {@link #names()} gives
 * every entry's name, for reports and tests.
 *
 * <pre>
 *   0  computation: 16 op counts (float and int: mad, addsub, mul, divmod, cmp, math_func,
 *      other_func; bool_op, select_op), then vectorize, unroll and parallel blocks of
 *      (num, prod, len, 8-way position one-hot), is_gpu, and the blockIdx.x/y/z, threadIdx.x/y/z
 *      and vthread extents
 *  57  buffer access: 5 buffers x 18 (access type R/W/RW one-hot, bytes, unique_bytes, lines,
 *      unique_lines, reuse type one-hot LoopMultipleRead/SerialMultipleReadWrite/NoReuse,
 *      reuse_dis_iter, reuse_dis_bytes, reuse_ct, bytes/reuse_ct, unique_bytes/reuse_ct,
 *      lines/reuse_ct, unique_lines/reuse_ct, stride)
 * 147  arithmetic-intensity curve: 10 samples
 * 157  allocation: alloc_size, alloc_prod, alloc_outer_prod, alloc_inner_prod
 * 161  outer scope: outer_prod, num_loops, auto_unroll_max_step
 * 164  Kiln's inner-loop group (not in Ansor): the 5 innermost loops, innermost first, each as
 *      (extent, is_spatial, is_reduce, kind: 0 serial, 1 vectorized, 2 unrolled, 3 parallel or
 *      thread-bound); the register tile (product of the spatial loops inside the innermost
 *      reduction loop), the innermost reduction loop's extent, the bytes one iteration of that
 *      loop touches; the operations done by the largest loop level whose touched bytes fit in
 *      32 KiB (an L1) and in 1 MiB (an L2)
 * 189  Kiln's tensor_intrinsic_calls: for a statement inside a tensorized loop nest, log2(1 + the
 *      number of times the intrinsic runs), else 0; its scalar op counts stay those of the pattern
 * </pre>
 *
 * <p>The first 164 entries are Ansor's; the last {@value #INNER_LENGTH} are Kiln's, added because
 * on a CPU the register tile and the innermost loop order decide much of a program's speed and
 * Ansor's features only see them through the annotation blocks (the cost model ranks held-out
 * programs better with them, docs/PERFORMANCE.md).
 */
public final class FeatureLayout {
    private FeatureLayout() {}

    /** Numbers per statement: Ansor's 164, Kiln's inner-loop group, then tensor_intrinsic_calls. */
    public static final int LENGTH = 164 + 25 + 1;
    /**
     * The width of the models trained before tensor_intrinsic_calls (the bundled pretrained model):
     * such a model reads the first {@value} entries of each row, which mean what they meant then.
     */
    public static final int LENGTH_BEFORE_TENSORIZE = 164 + 25;
    /** Ansor's features: the first 164 entries. */
    public static final int ANSOR_LENGTH = 164;
    /** Innermost loops described in Kiln's inner-loop group. */
    public static final int INNER_LOOPS = 5;
    /** Numbers per loop in Kiln's inner-loop group. */
    public static final int PER_INNER_LOOP = 4;
    /** The size of Kiln's inner-loop group. */
    public static final int INNER_LENGTH = INNER_LOOPS * PER_INNER_LOOP + 5;
    /** Buffers described per statement (the rest are dropped; fewer are padded with zeros). */
    public static final int MAX_BUFFERS = 5;
    /** Numbers per described buffer. */
    public static final int PER_BUFFER = 18;
    /** Samples of the arithmetic-intensity curve. */
    public static final int CURVE_SAMPLES = 10;

    /** The 16 arithmetic counts. */
    public static final int OPS = 0;
    /** vec_num, vec_prod, vec_len, then the position one-hot. */
    public static final int VECTORIZE = 16;
    /** unroll_num, unroll_prod, unroll_len, then the position one-hot. */
    public static final int UNROLL = 27;
    /** parallel_num, parallel_prod, parallel_len, then the position one-hot. */
    public static final int PARALLEL = 38;
    /** Entries per annotation block: three numbers and an 8-way one-hot. */
    public static final int ANNOTATION_BLOCK = 11;

    public static final int IS_GPU = 49;
    /** blockIdx.x, y, z, threadIdx.x, y, z, vthread extents (1 when unused). */
    public static final int THREAD_EXTENTS = 50;
    /** The first buffer block. */
    public static final int BUFFERS = 57;

    public static final int CURVE = BUFFERS + MAX_BUFFERS * PER_BUFFER;
    public static final int ALLOCATION = CURVE + CURVE_SAMPLES;
    public static final int OUTER = ALLOCATION + 4;
    /** Kiln's inner-loop group: 5 loops of (extent, is_spatial, is_reduce, kind), then the five totals. */
    public static final int INNER = OUTER + 3;
    /** register tile, inner reduce extent, bytes per inner reduce iteration, L1-fit ops, L2-fit ops. */
    public static final int INNER_TOTALS = INNER + INNER_LOOPS * PER_INNER_LOOP;
    /** log2(1 + runs of the tensor intrinsic) for a statement in a tensorized nest, else 0. */
    public static final int TENSOR_INTRINSIC = INNER_TOTALS + 5;

    /** Offsets inside an 18-entry buffer block. */
    public static final int B_ACCESS_TYPE = 0,
            B_BYTES = 3,
            B_UNIQUE_BYTES = 4,
            B_LINES = 5,
            B_UNIQUE_LINES = 6,
            B_REUSE_TYPE = 7,
            B_REUSE_DIS_ITER = 10,
            B_REUSE_DIS_BYTES = 11,
            B_REUSE_CT = 12,
            B_BYTES_PER_REUSE = 13,
            B_UNIQUE_BYTES_PER_REUSE = 14,
            B_LINES_PER_REUSE = 15,
            B_UNIQUE_LINES_PER_REUSE = 16,
            B_STRIDE = 17;

    /** The arithmetic counts in their order (the float ones, the int ones, then bool and select). */
    public static final List<String> OP_NAMES = List.of(
            "float_mad",
            "float_addsub",
            "float_mul",
            "float_divmod",
            "float_cmp",
            "float_math_func",
            "float_other_func",
            "int_mad",
            "int_addsub",
            "int_mul",
            "int_divmod",
            "int_cmp",
            "int_math_func",
            "int_other_func",
            "bool_op",
            "select_op");

    private static final List<String> NAMES = build();

    /** The name of every entry, in order ({@value #LENGTH} names). */
    public static List<String> names() {
        return NAMES;
    }

    /** The name of entry {@code i}. */
    public static String name(int i) {
        return NAMES.get(i);
    }

    /** The start of buffer block {@code b} (0 to {@value #MAX_BUFFERS} - 1). */
    public static int buffer(int b) {
        return BUFFERS + b * PER_BUFFER;
    }

    /** Applies Ansor's scaling to a count or size: sign(x) log2(|x| + 1). */
    public static float log2p(double x) {
        double v = Math.log1p(Math.abs(x)) / Math.log(2);
        return (float) (x < 0 ? -v : v);
    }

    private static List<String> build() {
        List<String> n = new ArrayList<>(OP_NAMES);
        for (String a : List.of("vec", "unroll", "parallel")) {
            n.add(a + "_num");
            n.add(a + "_prod");
            n.add(a + "_len");
            for (Position p : Position.values()) n.add(a + "_type." + p.label());
        }
        n.add("is_gpu");
        for (String t : List.of(
                "blockIdx_x_len",
                "blockIdx_y_len",
                "blockIdx_z_len",
                "threadIdx_x_len",
                "threadIdx_y_len",
                "threadIdx_z_len",
                "vthread_len")) n.add(t);
        for (int b = 0; b < MAX_BUFFERS; b++) {
            String p = "B" + b + ".";
            for (String s : List.of(
                    "acc_type.kRead",
                    "acc_type.kWrite",
                    "acc_type.kReadWrite",
                    "bytes",
                    "unique_bytes",
                    "lines",
                    "unique_lines",
                    "reuse_type.kLoopMultipleRead",
                    "reuse_type.kSerialMultipleReadWrite",
                    "reuse_type.kNoReuse",
                    "reuse_dis_iter",
                    "reuse_dis_bytes",
                    "reuse_ct",
                    "bytes_d_reuse_ct",
                    "unique_bytes_d_reuse_ct",
                    "lines_d_reuse_ct",
                    "unique_lines_d_reuse_ct",
                    "stride")) {
                n.add(p + s);
            }
        }
        for (int i = 0; i < CURVE_SAMPLES; i++) n.add("arith_intensity_curve_" + i);
        n.addAll(List.of("alloc_size", "alloc_prod", "alloc_outer_prod", "alloc_inner_prod"));
        n.addAll(List.of("outer_prod", "num_loops", "auto_unroll_max_step"));
        for (int l = 0; l < INNER_LOOPS; l++) {
            for (String s : List.of("len", "is_spatial", "is_reduce", "kind")) n.add("inner" + l + "." + s);
        }
        n.addAll(List.of("reg_tile", "inner_reduce_len", "inner_reduce_body_bytes", "l1_fit_ops", "l2_fit_ops"));
        n.add("tensor_intrinsic_calls");
        if (n.size() != LENGTH) throw new AssertionError("feature layout has " + n.size() + " names");
        return Collections.unmodifiableList(n);
    }

    /**
     * Where the innermost annotated loop of a kind sits among the statement's loops: whether it
     * is a spatial loop (its variable indexes the stored buffer) or a reduction loop, and whether
     * another loop of the same class lies inside it (not inner), outside it (not outer), or both
     * (middle). MIXED: loops of both classes carry the annotation. NONE: no such loop.
     */
    public enum Position {
        NONE("kPosNone"),
        INNER_SPATIAL("kPosInnerSpatial"),
        MIDDLE_SPATIAL("kPosMiddleSpatial"),
        OUTER_SPATIAL("kPosOuterSpatial"),
        INNER_REDUCE("kPosInnerReduce"),
        MIDDLE_REDUCE("kPosMiddleReduce"),
        OUTER_REDUCE("kPosOuterReduce"),
        MIXED("kPosMixed");

        private final String label;

        Position(String label) {
            this.label = label;
        }

        /** Ansor's name of the position. */
        public String label() {
            return label;
        }
    }
}
