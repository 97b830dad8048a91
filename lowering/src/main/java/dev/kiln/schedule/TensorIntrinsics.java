package dev.kiln.schedule;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The registry of tensor intrinsics, by name: the built-in CPU ones below, and any a backend or a
 * user {@link #register registers} ({@link AmxTensorIntrinsics} and {@link CudaTensorIntrinsics} add theirs).
 * Declarations only; each backend keeps its own implementations
 * under the same names (the LLVM backend's {@code CpuIntrinsics}).
 */
public final class TensorIntrinsics {
    private TensorIntrinsics() {}

    /**
     * AVX-512 VNNI {@code vpdpbusd} on 512 bits: {@code C[j] += sum_k int32(A[k]) * int32(B[j, k])}
     * for j &lt; 16, k &lt; 4, A uint8 (four bytes broadcast to every lane), B int8 packed 16 x 4
     * (64 contiguous bytes), C int32 (16 contiguous lanes).
     */
    public static final String VNNI_U8S8 = "x86.avx512.vpdpbusd.16x4";

    /**
     * AVX-512 BF16 {@code vdpbf16ps} on 512 bits: {@code C[j] += sum_k float32(A[k]) * float32(B[j, k])}
     * for j &lt; 16, k &lt; 2, A bfloat16 (one pair broadcast), B bfloat16 packed 16 x 2, C float32.
     */
    public static final String BF16_DOT = "x86.avx512.dpbf16ps.16x2";

    private static final Map<String, TensorIntrinsic> REGISTRY = new ConcurrentHashMap<>();

    static {
        register(dot(
                VNNI_U8S8,
                "u8 x s8 -> s32 dot products of 4, 16 lanes (vpdpbusd zmm)",
                List.of("avx512f", "avx512bw", "avx512vnni"),
                DType.UINT8,
                DType.INT8,
                DType.INT32,
                4));
        register(dot(
                BF16_DOT,
                "bf16 pairs -> f32 dot products, 16 lanes (vdpbf16ps zmm)",
                List.of("avx512f", "avx512bw", "avx512bf16"),
                DType.BFLOAT16,
                DType.BFLOAT16,
                DType.FLOAT32,
                2));
        AmxTensorIntrinsics.registerAll();
        CudaTensorIntrinsics.registerAll();
    }

    /**
     * The pattern of a 16-lane dot-product instruction: {@code C[j] = sum_k acc(A[k]) * acc(B[j, k])},
     * j &lt; 16, k &lt; {@code group}: what matmul, dense and conv2d compute once their weights are
     * packed so that the 16 output columns' {@code group} consecutive reduction elements are adjacent.
     */
    public static TensorIntrinsic dot(
            String name, String description, List<String> features, DType a, DType b, DType acc, int group) {
        Tensor ta = Te.placeholder("A", a, group);
        Tensor tb = Te.placeholder("B", b, 16, group);
        Tensor tc = Te.computeN("C", "tensorize_pattern", Shape.of(16), idx -> {
            IterVar k = Te.reduceAxis(group, "k");
            Expr prod = ta.at(k).cast(acc).mul(tb.at(idx.get(0), k).cast(acc));
            return Te.sum(k, prod);
        });
        return new TensorIntrinsic(name, description, Target.Kind.CPU, features, ComputeDAG.of(tc), List.of(1, 1, 1));
    }

    /** Adds (or replaces) a declaration. */
    public static void register(TensorIntrinsic intrinsic) {
        REGISTRY.put(intrinsic.name(), intrinsic);
    }

    /** The declaration called {@code name}; a {@link ScheduleException} listing the known ones if none is. */
    public static TensorIntrinsic get(String name) {
        TensorIntrinsic in = name == null ? null : REGISTRY.get(name);
        if (in == null) {
            throw new ScheduleException("unknown tensor intrinsic '" + name + "'; known: " + names());
        }
        return in;
    }

    /** Every registered name, sorted. */
    public static List<String> names() {
        List<String> out = new ArrayList<>(REGISTRY.keySet());
        out.sort(null);
        return out;
    }

    /** The registered intrinsics that {@code target} has the features for, sorted by name. */
    public static List<TensorIntrinsic> availableOn(Target target) {
        return names().stream()
                .map(REGISTRY::get)
                .filter(i -> i.availableOn(target))
                .toList();
    }
}
