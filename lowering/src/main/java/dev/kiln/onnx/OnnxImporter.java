package dev.kiln.onnx;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.Op;
import dev.kiln.graph.Value;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.Ref.ConstRef;
import dev.kiln.onnx.Ref.ValueRef;
import dev.kiln.onnx.proto.Onnx.GraphProto;
import dev.kiln.onnx.proto.Onnx.ModelProto;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import dev.kiln.onnx.proto.Onnx.OperatorSetIdProto;
import dev.kiln.onnx.proto.Onnx.TensorProto;
import dev.kiln.onnx.proto.Onnx.TensorShapeProto;
import dev.kiln.onnx.proto.Onnx.ValueInfoProto;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads an ONNX model into a Kiln {@link Graph}, ready for {@code Network.tune/build}:
 *
 * <pre>{@code
 * Graph net = OnnxImporter.load(Path.of("resnet50.onnx"), Map.of("batch", 1L));
 * }</pre>
 *
 * <p>Initializers become constant weights; Shape, Constant, Gather, Unsqueeze and the other shape
 * arithmetic are folded at import, so every shape is static (symbolic input extents are bound by
 * {@code dims}, by their ONNX name). Opsets 13 to 21 of the default domain are read. Image tensors
 * produced by Conv and the pools are kept NHWC inside the graph (Kiln's tuned convolutions read
 * NHWC; conv weights are reordered to HWIO at import); graph inputs and outputs keep ONNX's layout,
 * so the caller passes and gets the same arrays as with ONNX Runtime. An unsupported operator,
 * attribute, opset or data type throws {@link KilnException} naming the node and what is missing.
 */
public final class OnnxImporter {
    /** The opsets of the default domain this importer reads. */
    public static final int MIN_OPSET = 13, MAX_OPSET = 21;

    private OnnxImporter() {}

    /** Reads the model file; {@code dims} binds symbolic input extents by name (e.g. "batch" -> 1). */
    public static Graph load(Path file, Map<String, Long> dims) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read ONNX model " + file, e);
        }
        try {
            Path dir = file.toAbsolutePath().getParent();
            return fromModel(ModelProto.parseFrom(bytes), dims, dir);
        } catch (InvalidProtocolBufferException e) {
            throw new KilnException("'" + file + "' is not an ONNX model (protobuf: " + e.getMessage() + ")");
        } catch (KilnException e) {
            throw new KilnException(file.getFileName() + ": " + e.getMessage());
        }
    }

    /** Imports a parsed model whose weights are all inside it (no external data). */
    public static Graph fromModel(ModelProto model, Map<String, Long> dims) {
        return fromModel(model, dims, null);
    }

    /** Imports a parsed model; initializers kept as external data are read from files in {@code dir}. */
    public static Graph fromModel(ModelProto model, Map<String, Long> dims, Path dir) {
        int opset = opset(model);
        GraphProto gp = model.getGraph();
        if (gp.getNodeCount() == 0) throw new KilnException("the model has no graph nodes (malformed or empty file)");
        String name = gp.getName().isBlank() ? "onnx" : gp.getName();
        GraphBuilder g = new GraphBuilder(name);
        Set<String> outputs = new HashSet<>();
        for (ValueInfoProto o : gp.getOutputList()) outputs.add(o.getName());
        ImportContext ctx = new ImportContext(g, opset, outputs);
        for (TensorProto t : gp.getInitializerList()) {
            try {
                ctx.define(t.getName(), new ConstRef(Const.of(t, dir), t.getName()));
            } catch (KilnException e) {
                throw new KilnException("initializer '" + t.getName() + "': " + e.getMessage());
            }
        }
        Set<String> inputNames = new HashSet<>();
        for (ValueInfoProto in : gp.getInputList()) {
            if (ctx.isDefined(in.getName())) continue;
            inputNames.add(in.getName()); // an initializer listed as input (IR < 4): a constant
            ctx.reserve(in.getName());
            Value v = g.input(in.getName(), inputType(in), inputShape(in, dims));
            ctx.define(in.getName(), new ValueRef(v, v.dims(), null));
        }
        List<NodeProto> nodes = QdqFusion.fuse( // a QDQ model's units into QLinearConv / QLinearMatMul
                gp.getNodeList(), t -> ctx.isDefined(t) && ctx.ref(t) instanceof ConstRef c ? c.c() : null, outputs);
        for (NodeProto n : nodes) convert(ctx, n);
        List<Value> outs = new ArrayList<>();
        for (ValueInfoProto o : gp.getOutputList()) {
            Ref r = ctx.ref(o.getName());
            if (r instanceof ConstRef) {
                throw new KilnException(
                        "graph output '" + o.getName() + "' is a constant (it does not depend on any input)");
            }
            Value v = ctx.plain(r); // NHWC outputs go back to ONNX's layout, under the ONNX name
            if (outs.contains(v)
                    || inputNames.contains(v.name())) { // one value under two output names, or an input: a copy
                long[] zero = new long[v.shape().size()], one = new long[zero.length];
                java.util.Arrays.fill(one, 1);
                v = g.node(
                        ctx.fresh(o.getName()),
                        new Op.StridedSlice(ShapeOps.boxed(zero), ShapeOps.boxed(one), v.shape()),
                        v);
            }
            outs.add(v);
        }
        return g.output(outs.toArray(Value[]::new)).build();
    }

    private static void convert(ImportContext ctx, NodeProto n) {
        String where = "node '" + (n.getName().isEmpty() ? "(unnamed, output " + n.getOutputList() + ")" : n.getName())
                + "' (" + n.getOpType() + ")";
        if (!n.getDomain().isEmpty() && !n.getDomain().equals("ai.onnx")) {
            throw new KilnException(where + ": operators of domain '" + n.getDomain()
                    + "' are not supported (only ONNX's default domain)");
        }
        try {
            OnnxOps.convert(ctx, n);
        } catch (KilnException e) {
            throw new KilnException(where + ": " + e.getMessage());
        } catch (RuntimeException e) { // a bug or a malformed node: still name the node
            throw new KilnException(where + ": " + e, e);
        }
    }

    private static int opset(ModelProto model) {
        Integer found = null;
        for (OperatorSetIdProto o : model.getOpsetImportList()) {
            if (o.getDomain().isEmpty() || o.getDomain().equals("ai.onnx")) found = (int) o.getVersion();
        }
        if (found == null) throw new KilnException("the model imports no opset of ONNX's default domain");
        if (found < MIN_OPSET || found > MAX_OPSET) {
            throw new KilnException("opset " + found + " is not supported (Kiln reads opsets " + MIN_OPSET + " to "
                    + MAX_OPSET + "; convert the model with onnx.version_converter)");
        }
        return found;
    }

    private static DType inputType(ValueInfoProto in) {
        String what = "graph input '" + in.getName() + "'";
        if (!in.getType().hasTensorType()) throw new KilnException(what + " is not a tensor");
        return OnnxTypes.of(in.getType().getTensorType().getElemType(), what);
    }

    private static long[] inputShape(ValueInfoProto in, Map<String, Long> dims) {
        String what = "graph input '" + in.getName() + "'";
        if (!in.getType().getTensorType().hasShape())
            throw new KilnException(what + " has no shape; Kiln needs static shapes");
        List<TensorShapeProto.Dimension> ds =
                in.getType().getTensorType().getShape().getDimList();
        long[] shape = new long[ds.size()];
        for (int i = 0; i < shape.length; i++) {
            TensorShapeProto.Dimension d = ds.get(i);
            if (d.hasDimValue() && d.getDimValue() > 0) {
                shape[i] = d.getDimValue();
            } else if (d.hasDimParam() && dims.containsKey(d.getDimParam())) {
                shape[i] = dims.get(d.getDimParam());
            } else {
                throw new KilnException(what + ": axis " + i + " is "
                        + (d.hasDimParam()
                                ? "symbolic ('" + d.getDimParam() + "'); bind it at import, e.g. Map.of(\""
                                        + d.getDimParam() + "\", 1L)"
                                : "of unknown extent; Kiln needs static shapes")
                        + " (bound: " + dims + ")");
            }
        }
        return shape;
    }
}
