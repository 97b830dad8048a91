package dev.kiln.bench.network;

import dev.kiln.bench.network.TorchNetwork.Format;
import dev.kiln.bench.network.TorchSlots.Form;
import dev.kiln.graph.Graph;
import dev.kiln.graph.Node;
import dev.kiln.graph.Op;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.bytedeco.pytorch.LongOptional;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorOptional;
import org.bytedeco.pytorch.global.torch;

/**
 * The convolution-network layers of a {@link TorchNetwork}, translated into libtorch calls as PyTorch's modules make
 * them: {@code conv2d} ({@code nn.Conv2d}, a following bias_add joined as its bias), {@code batch_norm}
 * ({@code nn.BatchNorm2d} in eval mode) and the 2-D pools ({@code max_pool2d}, {@code avg_pool2d},
 * {@code adaptive_avg_pool2d}). A layer on an NHWC value runs on its NCHW form ({@link Form#NCHW}), so it takes
 * oneDNN's path. Also the bias fusion a dense shares with a conv: which bias_add joins the call before it, and which
 * nodes are thereby fused away; and the convs run on NCHW copies because libtorch's oneDNN would crash on them in
 * channels_last. Each method adds the node's step to the network's {@link TorchSlots}.
 */
final class TorchConvLayers {
    private final Graph graph;
    private final Format format;
    private final TorchConstants constants;
    private final TorchSlots slots;
    private final Set<String> fusedAway = new HashSet<>(); // bias_adds joined to the call before them
    private final List<String> sidestepped = new ArrayList<>(); // convs run NCHW in a channels_last network

    TorchConvLayers(Graph graph, Format format, TorchConstants constants, TorchSlots slots) {
        this.graph = graph;
        this.format = format;
        this.constants = constants;
        this.slots = slots;
    }

    /**
     * The convs this channels_last network runs on contiguous NCHW copies because libtorch's oneDNN would crash on them
     * ({@link TorchRuntime#oneDnn37Brgemm1x1Fpe}); empty otherwise.
     */
    List<String> sidestepped() {
        return List.copyOf(sidestepped);
    }

    /** Whether node {@code name} is a bias_add already joined to the call before it. */
    boolean fusedAway(String name) {
        return fusedAway.contains(name);
    }

    /**
     * {@code conv2d} (as {@code nn.Conv2d}: a following bias_add on the channel axis joins the call as its bias), a
     * constant weight made OIHW once; asymmetric pads as {@code constant_pad_nd} first. In a channels_last network the
     * 1x1 shapes libtorch's oneDNN crashes on run on contiguous NCHW copies ({@link #sidestepped}).
     */
    void conv2d(Node n, Op.Conv2d c) {
        boolean nhwc = c.layout().equals("NHWC");
        Form f = nhwc ? Form.NCHW : Form.LOGICAL;
        String xName = n.inputs().get(0), wName = n.inputs().get(1);
        int x = slots.slot(xName, f);
        List<Long> p = c.pads();
        boolean symmetric = p.get(0).equals(p.get(2)) && p.get(1).equals(p.get(3));
        long[] stride = {c.strides().get(0), c.strides().get(1)};
        long[] dil = {c.dilations().get(0), c.dilations().get(1)};
        long[] pad = symmetric ? new long[] {p.get(0), p.get(1)} : new long[] {0, 0};
        long[] padNd = {p.get(1), p.get(3), p.get(0), p.get(2)}; // F.pad order: left, right, top, bottom
        long groups = c.groups();
        String bias = fusibleBias(n, nhwc ? 3 : 1);
        TensorOptional b =
                bias == null ? new TensorOptional() : constants.keep(new TensorOptional(constants.asIs(bias)));
        String target = bias == null ? n.name() : biasNodeOf(n);
        if (graph.isConstant(wName)) {
            long[] wd = graph.value(wName).dims(); // HWIO or OIHW
            long ic = (nhwc ? wd[2] : wd[1]) * groups, oc = nhwc ? wd[3] : wd[0];
            long kh = nhwc ? wd[0] : wd[2], kw = nhwc ? wd[1] : wd[3];
            // libtorch's oneDNN would die creating this conv in channels_last (TorchRuntime.oneDnn37Brgemm1x1Fpe): it
            // runs on contiguous NCHW copies (oneDNN's other 1x1 path), its output goes back to channels_last
            boolean runNchw =
                    format == Format.CHANNELS_LAST && nhwc && TorchRuntime.oneDnn37Brgemm1x1Fpe(kh, kw, groups, ic, oc);
            if (runNchw) sidestepped.add(n.name());
            Tensor w = runNchw ? constants.weight(wName, true, Format.NCHW) : constants.weight(wName, nhwc);
            slots.emit(target, f, t -> {
                Tensor in = symmetric ? t[x] : torch.constant_pad_nd(t[x], padNd);
                if (!runNchw) return torch.conv2d(in, w, b, stride, pad, dil, groups);
                return torch.conv2d(in.contiguous(), w, b, stride, pad, dil, groups)
                        .contiguous(torch.MemoryFormat.ChannelsLast);
            });
        } else {
            int ws = slots.slot(wName, Form.LOGICAL);
            slots.emit(target, f, t -> {
                Tensor w = nhwc ? t[ws].permute(3, 2, 0, 1) : t[ws];
                Tensor in = symmetric ? t[x] : torch.constant_pad_nd(t[x], padNd);
                return torch.conv2d(in, w, b, stride, pad, dil, groups);
            });
        }
    }

    /**
     * {@code batch_norm} when mean, variance, gamma and beta are constants on the channel axis; otherwise the formula a
     * user would write, broadcast along the axis.
     */
    void batchNorm(Node n, Op.BatchNorm b) {
        List<String> in = n.inputs();
        int rank = n.output().shape().size();
        int ax = b.axis() < 0 ? b.axis() + rank : b.axis();
        boolean allConst = in.subList(1, 5).stream().allMatch(graph::isConstant);
        Form f = rank == 4 && ax == 3 ? Form.NCHW : Form.LOGICAL;
        int tAxis = f == Form.NCHW ? 1 : ax;
        if (allConst && tAxis == 1 && rank >= 2) {
            int x = slots.slot(in.get(0), f);
            long c = n.output().shape().get(ax);
            TensorOptional mean = constants.keep(new TensorOptional(constants.asIs(in.get(1)))),
                    var = constants.keep(new TensorOptional(constants.asIs(in.get(2))));
            TensorOptional gamma = constants.keep(new TensorOptional(constants.asIs(in.get(3)))),
                    beta = constants.keep(new TensorOptional(constants.asIs(in.get(4))));
            slots.requireVector(in.get(1), c);
            double eps = b.epsilon();
            slots.emit(n.name(), f, t -> torch.batch_norm(t[x], gamma, beta, mean, var, false, 0.1, eps, true));
            return;
        }
        // The general case, as a user would write it: (x - mean) / sqrt(var + eps) * gamma + beta, broadcast along the
        // axis.
        int x = slots.slot(in.get(0), f);
        long[] view = new long[rank];
        Arrays.fill(view, 1);
        view[tAxis] = n.output().shape().get(ax);
        int mean = slots.operand(in.get(1), view),
                var = slots.operand(in.get(2), view),
                gamma = slots.operand(in.get(3), view),
                beta = slots.operand(in.get(4), view);
        Scalar eps = constants.keep(new Scalar(b.epsilon()));
        slots.emit(
                n.name(),
                f,
                t -> torch.add(
                        torch.mul(torch.div(torch.sub(t[x], t[mean]), torch.sqrt(torch.add(t[var], eps))), t[gamma]),
                        t[beta]));
    }

    /** {@code max_pool2d}, square window, no dilation. */
    void maxPool2d(Node n, Op.MaxPool2d p) {
        List<String> in = n.inputs();
        String out = n.name();
        Form f = p.layout().equals("NHWC") ? Form.NCHW : Form.LOGICAL;
        int x = slots.slot(in.get(0), f);
        long k = p.kernel(), s = p.stride(), pd = p.pad();
        slots.emit(
                out,
                f,
                t -> torch.max_pool2d(
                        t[x], new long[] {k, k}, new long[] {s, s}, new long[] {pd, pd}, new long[] {1, 1}, false));
    }

    /** {@code avg_pool2d}, square window, counting the padding or not as the node says. */
    void avgPool2d(Node n, Op.AvgPool2d p) {
        List<String> in = n.inputs();
        String out = n.name();
        Form f = p.layout().equals("NHWC") ? Form.NCHW : Form.LOGICAL;
        int x = slots.slot(in.get(0), f);
        long k = p.kernel(), s = p.stride(), pd = p.pad();
        boolean cip = p.countIncludePad();
        slots.emit(
                out,
                f,
                t -> torch.avg_pool2d(
                        t[x],
                        new long[] {k, k},
                        new long[] {s, s},
                        new long[] {pd, pd},
                        false,
                        cip,
                        new LongOptional()));
    }

    /** {@code adaptive_avg_pool2d} to 1 x 1. */
    void globalAvgPool2d(Node n, Op.GlobalAvgPool2d p) {
        List<String> in = n.inputs();
        String out = n.name();
        Form f = p.layout().equals("NHWC") ? Form.NCHW : Form.LOGICAL;
        int x = slots.slot(in.get(0), f);
        slots.emit(out, f, t -> torch.adaptive_avg_pool2d(t[x], 1, 1));
    }

    /**
     * The constant bias of the bias_add that alone reads {@code n}'s output along {@code channelAxis}, which then joins
     * the call; or null.
     */
    String fusibleBias(Node n, int channelAxis) {
        if (graph.isOutput(n.name())) return null;
        List<Node> cs = graph.consumers(n.name());
        if (cs.size() != 1 || !(cs.getFirst().op() instanceof Op.BiasAdd ba)) return null;
        Node bn = cs.getFirst();
        int rank = n.output().shape().size();
        int ax = ba.axis() < 0 ? ba.axis() + rank : ba.axis();
        if (ax != channelAxis
                || !bn.inputs().get(0).equals(n.name())
                || !graph.isConstant(bn.inputs().get(1))) return null;
        if (graph.value(bn.inputs().get(1)).shape().size() != 1) return null;
        return bn.inputs().get(1);
    }

    /** Marks the bias_add after {@code n} as fused; returns its name, under which the fused call's result goes. */
    String biasNodeOf(Node n) {
        Node bn = graph.consumers(n.name()).getFirst();
        fusedAway.add(bn.name());
        return bn.name();
    }
}
