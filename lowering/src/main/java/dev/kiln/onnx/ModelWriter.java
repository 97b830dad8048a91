package dev.kiln.onnx;

import com.google.protobuf.ByteString;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.proto.Onnx.AttributeProto;
import dev.kiln.onnx.proto.Onnx.GraphProto;
import dev.kiln.onnx.proto.Onnx.ModelProto;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import dev.kiln.onnx.proto.Onnx.OperatorSetIdProto;
import dev.kiln.onnx.proto.Onnx.StringStringEntryProto;
import dev.kiln.onnx.proto.Onnx.TensorProto;
import dev.kiln.onnx.proto.Onnx.TensorShapeProto;
import dev.kiln.onnx.proto.Onnx.TypeProto;
import dev.kiln.onnx.proto.Onnx.ValueInfoProto;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Writes ONNX models through the generated message classes (no model hub is reachable here, so
 * tests and {@link OnnxZoo} make their own): typed inputs and outputs (float32 unless told),
 * seeded random initializers (float32 or integer),
 * nodes with attributes given as name/value pairs.
 *
 * <pre>{@code
 * ModelWriter m = new ModelWriter("mlp", 17);
 * m.input("x", "batch", 784);
 * m.node("Gemm", new String[] {"x", m.weight("w", 1, 0.05, 10, 784), m.weight("b", 2, 0.1, 10)}, "y", "transB", 1L);
 * byte[] onnx = m.output("y").toBytes();
 * }</pre>
 */
public final class ModelWriter {
    private final GraphProto.Builder graph = GraphProto.newBuilder();
    private final int opset;
    private final Map<String, Integer> counters = new HashMap<>();

    public ModelWriter(String name, int opset) {
        graph.setName(name);
        this.opset = opset;
    }

    /** A float32 graph input; each extent is a Long (fixed) or a String (symbolic, e.g. "batch"). */
    public ModelWriter input(String name, Object... dims) {
        return input(name, DType.FLOAT32, dims);
    }

    /** A graph input of element type {@code type} (int64 token ids, uint8 images, ...). */
    public ModelWriter input(String name, DType type, Object... dims) {
        graph.addInput(valueInfo(name, type, dims));
        return this;
    }

    /** Marks {@code name} as a float32 graph output (shape left to the reader). */
    public ModelWriter output(String name) {
        return output(name, DType.FLOAT32);
    }

    /** Marks {@code name} as a graph output of element type {@code type}. */
    public ModelWriter output(String name, DType type) {
        graph.addOutput(ValueInfoProto.newBuilder()
                .setName(name)
                .setType(TypeProto.newBuilder()
                        .setTensorType(TypeProto.Tensor.newBuilder()
                                .setElemType(OnnxTypes.onnx(type).getNumber()))));
        return this;
    }

    /** A float32 initializer, uniform in [-scale, scale) from {@code seed}; returns its name. */
    public String weight(String name, long seed, double scale, long... shape) {
        return uniform(name, seed, -scale, scale, shape);
    }

    /** A float32 initializer, uniform in [lo, hi) from {@code seed}; returns its name. */
    public String uniform(String name, long seed, double lo, double hi, long... shape) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] v = new float[(int) Const.count(shape)];
        for (int i = 0; i < v.length; i++) v[i] = (float) (lo + (hi - lo) * r.nextDouble());
        return floats(name, v, shape);
    }

    /** A float32 initializer with the given values (raw little-endian data). */
    public String floats(String name, float[] values, long... shape) {
        ByteBuffer b = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : values) b.putFloat(f);
        TensorProto.Builder t = TensorProto.newBuilder()
                .setName(name)
                .setDataType(TensorProto.DataType.FLOAT_VALUE)
                .setRawData(ByteString.copyFrom(b.array()));
        for (long d : shape) t.addDims(d);
        graph.addInitializer(t);
        return name;
    }

    /** An int64 initializer (shapes, axes, indices), in the typed field. */
    public String longs(String name, long[] values, long... shape) {
        TensorProto.Builder t = TensorProto.newBuilder().setName(name).setDataType(TensorProto.DataType.INT64_VALUE);
        for (long v : values) t.addInt64Data(v);
        for (long d : shape) t.addDims(d);
        graph.addInitializer(t);
        return name;
    }

    /** An integer initializer of type {@code type} (int8, uint8, int16, int32, int64) in raw little-endian data. */
    public String ints(String name, DType type, long[] values, long... shape) {
        if (!type.isInt()) throw new KilnException("initializer '" + name + "': " + type + " is not an integer type");
        ByteBuffer b = ByteBuffer.allocate(type.bytes() * values.length).order(ByteOrder.LITTLE_ENDIAN);
        for (long v : values) {
            if (v < type.minInt() || v > type.maxInt())
                throw new KilnException("initializer '" + name + "': " + v + " does not fit " + type);
            switch (type.bytes()) {
                case 1 -> b.put((byte) v);
                case 2 -> b.putShort((short) v);
                case 4 -> b.putInt((int) v);
                default -> b.putLong(v);
            }
        }
        TensorProto.Builder t = TensorProto.newBuilder()
                .setName(name)
                .setDataType(OnnxTypes.onnx(type).getNumber())
                .setRawData(ByteString.copyFrom(b.array()));
        for (long d : shape) t.addDims(d);
        graph.addInitializer(t);
        return name;
    }

    /** An integer initializer uniform in [lo, hi] (inclusive) from {@code seed}. */
    public String randomInts(String name, DType type, long seed, long lo, long hi, long... shape) {
        SplittableRandom r = new SplittableRandom(seed);
        long[] v = new long[(int) Const.count(shape)];
        for (int i = 0; i < v.length; i++) v[i] = r.nextLong(lo, hi + 1);
        return ints(name, type, v, shape);
    }

    /** A 1-D int64 initializer. */
    public String longs(String name, long... values) {
        return longs(name, values, values.length);
    }

    /**
     * A node with one output; {@code attrs} alternate name and value (Long, Double, String, long[],
     * float[] or a TensorProto). Returns the output's name.
     */
    public String node(String opType, String[] inputs, String output, Object... attrs) {
        return node(opType, inputs, new String[] {output}, attrs);
    }

    /** A node with several outputs (Split); returns the first. */
    public String node(String opType, String[] inputs, String[] outputs, Object... attrs) {
        if (attrs.length % 2 != 0) throw new KilnException("attributes come in name/value pairs");
        NodeProto.Builder n = NodeProto.newBuilder()
                .setOpType(opType)
                .setName(opType.toLowerCase(java.util.Locale.ROOT) + "_" + counters.merge(opType, 1, Integer::sum));
        for (String i : inputs) n.addInput(i);
        for (String o : outputs) n.addOutput(o);
        for (int i = 0; i < attrs.length; i += 2) n.addAttribute(attribute((String) attrs[i], attrs[i + 1]));
        graph.addNode(n);
        return outputs[0];
    }

    public ModelProto build() {
        return ModelProto.newBuilder()
                .setIrVersion(8)
                .setProducerName("kiln")
                .setGraph(graph)
                .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("").setVersion(opset))
                .build();
    }

    public byte[] toBytes() {
        return build().toByteArray();
    }

    public Path write(Path file) {
        try {
            return Files.write(file, toBytes());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /**
     * Writes the model with every initializer of at least {@code threshold} bytes moved to the side
     * file {@code dataFile} (next to {@code file}), as ONNX's external data: how models over 2 GB are saved.
     */
    public Path writeWithExternalData(Path file, String dataFile, long threshold) {
        ModelProto.Builder mb = build().toBuilder();
        GraphProto.Builder gb = mb.getGraphBuilder();
        Path data = file.resolveSibling(dataFile);
        try (var out = Files.newOutputStream(data)) {
            long offset = 0;
            for (TensorProto.Builder t : gb.getInitializerBuilderList()) {
                if (!t.hasRawData() || t.getRawData().size() < threshold) continue;
                ByteString raw = t.getRawData();
                raw.writeTo(out);
                t.clearRawData()
                        .setDataLocation(TensorProto.DataLocation.EXTERNAL)
                        .addExternalData(entry("location", dataFile))
                        .addExternalData(entry("offset", String.valueOf(offset)))
                        .addExternalData(entry("length", String.valueOf(raw.size())));
                offset += raw.size();
            }
            return Files.write(file, mb.build().toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + " with external data " + data, e);
        }
    }

    private static StringStringEntryProto entry(String k, String v) {
        return StringStringEntryProto.newBuilder().setKey(k).setValue(v).build();
    }

    private static AttributeProto attribute(String name, Object v) {
        AttributeProto.Builder a = AttributeProto.newBuilder().setName(name);
        switch (v) {
            case Long l -> a.setType(AttributeProto.AttributeType.INT).setI(l);
            case Integer i -> a.setType(AttributeProto.AttributeType.INT).setI(i);
            case Double d -> a.setType(AttributeProto.AttributeType.FLOAT).setF(d.floatValue());
            case String s -> a.setType(AttributeProto.AttributeType.STRING).setS(ByteString.copyFromUtf8(s));
            case long[] ls -> {
                a.setType(AttributeProto.AttributeType.INTS);
                for (long l : ls) a.addInts(l);
            }
            case float[] fs -> {
                a.setType(AttributeProto.AttributeType.FLOATS);
                for (float f : fs) a.addFloats(f);
            }
            case TensorProto t -> a.setType(AttributeProto.AttributeType.TENSOR).setT(t);
            default ->
                throw new KilnException("attribute '" + name + "': cannot write a "
                        + v.getClass().getSimpleName());
        }
        return a.build();
    }

    private static ValueInfoProto valueInfo(String name, DType type, Object... dims) {
        TensorShapeProto.Builder s = TensorShapeProto.newBuilder();
        for (Object d : dims) {
            switch (d) {
                case String p ->
                    s.addDim(TensorShapeProto.Dimension.newBuilder().setDimParam(p));
                case Number x ->
                    s.addDim(TensorShapeProto.Dimension.newBuilder().setDimValue(x.longValue()));
                default ->
                    throw new KilnException("input '" + name + "': an extent is a number or a symbol name, got " + d);
            }
        }
        return ValueInfoProto.newBuilder()
                .setName(name)
                .setType(TypeProto.newBuilder()
                        .setTensorType(TypeProto.Tensor.newBuilder()
                                .setElemType(OnnxTypes.onnx(type).getNumber())
                                .setShape(s)))
                .build();
    }
}
