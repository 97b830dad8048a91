package dev.kiln.bench.suite;

import dev.kiln.bench.network.TorchRuntime;
import dev.kiln.bench.network.TorchTensors;
import dev.kiln.runtime.NDArray;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.InferenceMode;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.ScalarTypeOptional;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorArrayRef;
import org.bytedeco.pytorch.TensorOptional;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.global.torch;

/**
 * PyTorch (libtorch through org.bytedeco pytorch, eager, {@link InferenceMode}) on every suite
 * operator, as a PyTorch user writes it: activations held channels_last (NCHW logical, NHWC in
 * memory, so convs take the oneDNN path without reordering the activations), weights converted
 * once to PyTorch's layouts (OIHW, [CI, CO, KH, KW] for the transposed conv), then one functional
 * call per operator ({@code conv1d/2d/3d}, {@code conv_transpose2d}, {@code bmm},
 * {@code linalg_vector_norm}, {@code softmax}); ConvLayer is conv2d with its bias, then
 * {@code mul_}/{@code add_}/{@code relu_} in place; TBS is two permuted views, {@code matmul},
 * {@code softmax}; PyTorch has no capsule conv, so CAP is what a user would write: pad, two
 * {@code unfold}s and one {@code einsum}. The threads are set by {@link TorchRuntime}.
 */
final class TorchOps implements Baseline {

    /** PyTorch's own word on the ISA its kernels use ("CPU capability usage: AVX512"), added to every kernel name. */
    private final String isa;

    TorchOps() {
        String v = TorchRuntime.ensureAvailable();
        int i = v.indexOf("CPU capability usage:");
        isa = i < 0
                ? "CPU capability unknown"
                : v.substring(i)
                        .split(";")[0]
                        .replace("CPU capability usage:", "CPU capability")
                        .strip();
    }

    @Override
    public String name() {
        return "pytorch";
    }

    @Override
    public String describe() {
        return TorchRuntime.ensureAvailable() + "; " + TorchRuntime.threadReport();
    }

    @Override
    public Prepared prepare(SuiteWorkload w, Map<String, NDArray> in, long[] outDims) {
        List<Tensor> held = new ArrayList<>();
        Function<String, Tensor> t = name -> keep(held, TorchTensors.toTorch(in.get(name)));
        UnaryOperator<Tensor> nhwc = o -> o.permute(0, 2, 3, 1);
        long s, p;
        return switch (w.op()) {
            case "C1D" -> {
                Tensor x = keep(held, t.apply("data").permute(0, 2, 1).contiguous());
                Tensor k = keep(held, t.apply("weight").permute(2, 1, 0).contiguous());
                s = w.p(5);
                p = w.p(6);
                yield new Call(
                        held,
                        "torch.conv1d (NCL)",
                        outDims,
                        () -> torch.conv1d(
                                x, k, new TensorOptional(), new long[] {s}, new long[] {p}, new long[] {1}, 1),
                        o -> o.permute(0, 2, 1));
            }
            case "C2D", "GRP", "DIL", "DEP" -> {
                Tensor x = keep(held, t.apply("data").permute(0, 3, 1, 2)); // channels_last already
                Tensor k = keep(
                        held,
                        t.apply("weight")
                                .permute(w.op().equals("DEP") ? new long[] {2, 3, 0, 1} : new long[] {3, 2, 0, 1})
                                .contiguous());
                long groups =
                        switch (w.op()) {
                            case "GRP" -> 4;
                            case "DEP" -> w.p(3);
                            default -> 1;
                        };
                long dil = w.op().equals("DIL") ? 2 : 1;
                s = w.op().equals("DEP") ? w.p(5) : w.p(6);
                p = w.op().equals("DEP") ? w.p(6) : w.p(7);
                yield new Call(
                        held,
                        "torch.conv2d channels_last" + (groups > 1 ? " groups " + groups : "")
                                + (dil > 1 ? " dilation 2" : ""),
                        outDims,
                        () -> torch.conv2d(
                                x,
                                k,
                                new TensorOptional(),
                                new long[] {s, s},
                                new long[] {p, p},
                                new long[] {dil, dil},
                                groups),
                        nhwc);
            }
            case "C3D" -> {
                Tensor x = keep(held, t.apply("data").permute(0, 4, 1, 2, 3)); // channels_last_3d already
                Tensor k = keep(held, t.apply("weight").permute(4, 3, 0, 1, 2).contiguous());
                s = w.p(7);
                p = w.p(8);
                yield new Call(
                        held,
                        "torch.conv3d channels_last_3d",
                        outDims,
                        () -> torch.conv3d(
                                x,
                                k,
                                new TensorOptional(),
                                new long[] {s, s, s},
                                new long[] {p, p, p},
                                new long[] {1, 1, 1},
                                1),
                        o -> o.permute(0, 2, 3, 4, 1));
            }
            case "GMM" -> {
                Tensor x = t.apply("X"), y = t.apply("Y");
                yield new Call(held, "torch.bmm", outDims, () -> torch.bmm(x, y), o -> o);
            }
            case "T2D" -> {
                Tensor x = keep(held, t.apply("data").permute(0, 3, 1, 2));
                Tensor k = keep(held, t.apply("weight").permute(2, 3, 0, 1).contiguous());
                s = w.p(6);
                p = w.p(7);
                yield new Call(
                        held,
                        "torch.conv_transpose2d channels_last",
                        outDims,
                        () -> torch.conv_transpose2d(
                                x,
                                k,
                                new TensorOptional(),
                                new long[] {s, s},
                                new long[] {p, p},
                                new long[] {0, 0},
                                1,
                                1,
                                1),
                        nhwc);
            }
            case "CAP" -> {
                Tensor x = t.apply("data"), k = t.apply("weight");
                long kk = w.p(5);
                s = w.p(6);
                p = w.p(7);
                yield new Call(
                        held,
                        "no capsule conv in PyTorch: constant_pad_nd + 2 unfold + einsum",
                        outDims,
                        () -> {
                            Tensor patches = torch.constant_pad_nd(x, 0, 0, 0, 0, 0, 0, p, p, p, p)
                                    .unfold(1, kk, s)
                                    .unfold(2, kk, s);
                            return torch.einsum(
                                    "nhwikcab,abkjco->nhwijo", new TensorArrayRef(new TensorVector(patches, k)));
                        },
                        o -> o);
            }
            case "NRM" -> {
                Tensor a = t.apply("A");
                yield new Call(
                        held,
                        "torch.linalg_vector_norm",
                        outDims,
                        () -> torch.linalg_vector_norm(
                                a, new Scalar(2.0), new long[] {1, 2}, false, new ScalarTypeOptional()),
                        o -> o);
            }
            case "SFM" -> {
                Tensor a = t.apply("A");
                yield new Call(held, "torch.softmax", outDims, () -> torch.softmax(a, 1), o -> o);
            }
            case "ConvLayer" -> {
                Tensor x = keep(held, t.apply("data").permute(0, 3, 1, 2));
                Tensor k = keep(held, t.apply("weight").permute(3, 2, 0, 1).contiguous());
                TensorOptional bias = new TensorOptional(t.apply("bias"));
                Tensor scale = keep(held, t.apply("bn_scale").view(1, -1, 1, 1));
                Tensor offset = keep(held, t.apply("bn_offset").view(1, -1, 1, 1));
                s = w.p(6);
                p = w.p(7);
                yield new Call(
                        held,
                        "torch.conv2d channels_last + bias, mul_, add_, relu_",
                        outDims,
                        () -> torch.conv2d(x, k, bias, new long[] {s, s}, new long[] {p, p}, new long[] {1, 1}, 1)
                                .mul_(scale)
                                .add_(offset)
                                .relu_(),
                        nhwc);
            }
            case "TBS" -> {
                Tensor q = keep(held, t.apply("query").permute(0, 2, 1, 3));
                Tensor v = keep(held, t.apply("value").permute(0, 2, 3, 1));
                yield new Call(
                        held,
                        "torch.matmul (permuted views) + softmax",
                        outDims,
                        () -> torch.softmax(torch.matmul(q, v), -1),
                        o -> o);
            }
            default -> throw new Unsupported("PyTorch: no translation of " + w.op());
        };
    }

    private static Tensor keep(List<Tensor> held, Tensor t) {
        held.add(t);
        return t;
    }

    /** One functional call; {@code toKiln} turns its result into Kiln's layout (a view; made contiguous on output). */
    private final class Call implements Prepared {
        private final List<Tensor> held;
        private final String kernel;
        private final long[] outDims;
        private final java.util.function.Supplier<Tensor> op;
        private final UnaryOperator<Tensor> toKiln;

        Call(
                List<Tensor> held,
                String kernel,
                long[] outDims,
                java.util.function.Supplier<Tensor> op,
                UnaryOperator<Tensor> toKiln) {
            this.held = held;
            this.kernel = kernel;
            this.outDims = outDims;
            this.op = op;
            this.toKiln = toKiln;
        }

        @Override
        public void run() {
            try (PointerScope scope = new PointerScope();
                    InferenceMode im = new InferenceMode()) {
                op.get();
            }
        }

        @Override
        public NDArray output() {
            try (PointerScope scope = new PointerScope();
                    InferenceMode im = new InferenceMode()) {
                return TorchTensors.toKiln(toKiln.apply(op.get()).contiguous(), outDims);
            }
        }

        @Override
        public String kernel() {
            return kernel + "; " + isa;
        }

        @Override
        public void close() {
            for (Tensor t : held) t.close();
        }
    }
}
