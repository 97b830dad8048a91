package dev.kiln.bench.onnx;

import ai.onnxruntime.OrtException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kiln.autoschedule.network.NetworkProfile;
import dev.kiln.graph.Node;
import dev.kiln.graph.Value;
import dev.kiln.graph.fuse.FusedGroup;
import dev.kiln.graph.fuse.Partition;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.proto.Onnx.ModelProto;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import dev.kiln.runtime.NDArray;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * ONNX Runtime's own per-node profile of a model ({@code SessionOptions.enableProfiling}: a Chrome trace with one
 * {@code <node>_kernel_time} event per node and run), read back and laid beside Kiln's per-call profile, so that
 * a network's gap to ONNX Runtime is located layer by layer. Each Kiln call is matched with the ONNX Runtime
 * nodes that compute its fused group's values: ONNX Runtime keeps a node's name through its own rewrites up to a
 * suffix ({@code _nchwc} from its NCHWc layout pass), and a Kiln node's name is the ONNX output it computes
 * (with a suffix such as {@code /nhwc} where the import changed its layout). Nodes of either side with no match
 * are listed on their own (ONNX Runtime's layout reorders; Kiln's input transposes).
 *
 * @param nodes the profiled nodes in the order of their first run, each with its median time over the runs
 */
record OrtProfile(List<NodeTime> nodes) {
    /** One node of ONNX Runtime's session: its name there, its operator, its median kernel time. */
    record NodeTime(String name, String op, double ms) {}

    /** Suffixes ONNX Runtime appends to the name of a node it rewrote. */
    private static final List<String> SUFFIXES = List.of("_nchwc");
    /** Prefixes ONNX Runtime puts before the name of a node it fused with its activation. */
    private static final List<String> PREFIXES = List.of("fused ");

    /**
     * Runs {@code runner}'s model {@code runs} times in a profiling session of its own (after {@code warmup}
     * runs, also profiled and dropped by taking medians) and reads the profile; the trace file goes to a temporary
     * directory and is deleted.
     */
    static OrtProfile measure(byte[] model, int threads, List<Value> inputs, NDArray[] data, int runs)
            throws IOException {
        if (runs < 1) throw new KilnException("ONNX Runtime profile: runs must be at least 1, got " + runs);
        Path dir = Files.createTempDirectory("kiln-ort-profile");
        try {
            Path trace;
            try (OrtSessionRunner ort = new OrtSessionRunner(
                    model,
                    threads,
                    inputs,
                    data,
                    o -> o.enableProfiling(dir.resolve("ort").toString()))) {
                for (int i = 0; i < runs; i++) ort.runOnly();
                trace = Path.of(ort.endProfiling());
            }
            return parse(Files.readString(trace));
        } catch (OrtException e) {
            throw new KilnException("ONNX Runtime profile: " + e.getMessage());
        } finally {
            try (var s = Files.list(dir)) {
                for (Path p : s.toList()) Files.deleteIfExists(p);
            }
            Files.deleteIfExists(dir);
        }
    }

    /** Reads a profile trace: every {@code Node} event named {@code <node>_kernel_time}, medians per node. */
    static OrtProfile parse(String traceJson) throws IOException {
        JsonNode root = new ObjectMapper().readTree(traceJson);
        if (!root.isArray()) throw new KilnException("ONNX Runtime profile: expected a JSON array of events");
        Map<String, List<Double>> times = new LinkedHashMap<>();
        Map<String, String> ops = new HashMap<>();
        for (JsonNode ev : root) {
            String name = ev.path("name").asText();
            if (!"Node".equals(ev.path("cat").asText()) || !name.endsWith("_kernel_time")) continue;
            String node = name.substring(0, name.length() - "_kernel_time".length());
            times.computeIfAbsent(node, k -> new ArrayList<>())
                    .add(ev.path("dur").asDouble() / 1e3);
            ops.put(node, ev.path("args").path("op_name").asText("?"));
        }
        List<NodeTime> nodes = new ArrayList<>();
        times.forEach((n, t) -> nodes.add(new NodeTime(n, ops.get(n), median(t))));
        return new OrtProfile(nodes);
    }

    /** The sum of the nodes' median times, ms. */
    double totalMs() {
        return nodes.stream().mapToDouble(NodeTime::ms).sum();
    }

    /**
     * Kiln's calls beside the ONNX Runtime nodes that compute the same values, by time lost to ONNX Runtime, the
     * {@code top} largest; then totals and the nodes of either side left unmatched.
     *
     * @param model     the ONNX model both ran (for its node names and outputs)
     * @param calls     Kiln's profile of the network
     * @param partition Kiln's fused groups (the calls' groups by id)
     */
    String compare(ModelProto model, NetworkProfile calls, Partition partition, int top) {
        Map<Integer, FusedGroup> groups = new HashMap<>();
        for (FusedGroup fg : partition.groups()) groups.put(fg.id(), fg);
        Map<String, List<String>> outputsOf = new HashMap<>();
        for (NodeProto n : model.getGraph().getNodeList()) outputsOf.put(n.getName(), n.getOutputList());
        Map<String, String> quantized = quantizedOutputs(model);
        Map<Integer, List<NodeTime>> byCall = new HashMap<>();
        List<NodeTime> unmatched = new ArrayList<>();
        for (NodeTime t : nodes) {
            int c = matchingCall(t.name(), outputsOf, quantized, calls, groups);
            if (c < 0) unmatched.add(t);
            else byCall.computeIfAbsent(c, k -> new ArrayList<>()).add(t);
        }
        record Row(int call, NetworkProfile.Entry e, double ortMs, String ortOps, String node) {
            double lost() {
                return e.seconds() * 1e3 - ortMs;
            }
        }
        List<Row> rows = new ArrayList<>();
        List<Row> kilnOnly = new ArrayList<>();
        for (int c = 0; c < calls.calls().size(); c++) {
            NetworkProfile.Entry e = calls.calls().get(c);
            List<NodeTime> ts = byCall.getOrDefault(c, List.of());
            FusedGroup g = groups.get(e.group());
            String node = g == null ? "?" : g.nodes().get(g.nodes().size() - 1).name();
            Row r = new Row(
                    c,
                    e,
                    ts.stream().mapToDouble(NodeTime::ms).sum(),
                    String.join("+", ts.stream().map(NodeTime::op).toList()),
                    node);
            if (ts.isEmpty()) kilnOnly.add(r);
            else rows.add(r);
        }
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "%-5s %-5s %-28s %-34s %9s %9s %9s %-16s %8s%n",
                "call",
                "task",
                "kernel",
                "value",
                "kiln ms",
                "again ms",
                "ORT ms",
                "ORT op",
                "lost ms"));
        rows.stream()
                .sorted((a, b) -> Double.compare(b.lost(), a.lost()))
                .limit(top)
                .forEach(r -> sb.append(String.format(
                        Locale.ROOT,
                        "%-5d %-5d %-28s %-34s %9.4f %9.4f %9.4f %-16s %+8.4f%n",
                        r.call(),
                        r.e().task(),
                        clip(r.e().description(), 28),
                        clip(r.node(), 34),
                        r.e().seconds() * 1e3,
                        r.e().againSeconds() * 1e3,
                        r.ortMs(),
                        clip(r.ortOps(), 16),
                        r.lost())));
        double kMatched = rows.stream().mapToDouble(r -> r.e().seconds() * 1e3).sum();
        double oMatched = rows.stream().mapToDouble(Row::ortMs).sum();
        double kOnly = kilnOnly.stream().mapToDouble(r -> r.e().seconds() * 1e3).sum();
        double oOnly = unmatched.stream().mapToDouble(NodeTime::ms).sum();
        sb.append(String.format(
                Locale.ROOT,
                "matched: %d Kiln calls %.4f ms against %d ONNX Runtime nodes %.4f ms (Kiln's speed %.2fx)%n",
                rows.size(),
                kMatched,
                nodes.size() - unmatched.size(),
                oMatched,
                oMatched / kMatched));
        sb.append(String.format(
                Locale.ROOT,
                "Kiln only: %.4f ms in %d calls%s%n",
                kOnly,
                kilnOnly.size(),
                listed(kilnOnly.stream()
                        .map(r -> String.format(
                                Locale.ROOT, "%s %s %.4f", r.e().description(), r.node(), r.e().seconds() * 1e3))
                        .toList())));
        sb.append(String.format(
                Locale.ROOT,
                "ONNX Runtime only: %.4f ms in %d nodes%s%n",
                oOnly,
                unmatched.size(),
                listed(unmatched.stream()
                        .map(t -> String.format(Locale.ROOT, "%s %s %.4f", t.op(), t.name(), t.ms()))
                        .toList())));
        sb.append(String.format(
                Locale.ROOT,
                "sums of per-call medians: Kiln %.4f ms, ONNX Runtime %.4f ms (its profiling adds a little per node)%n",
                kMatched + kOnly,
                totalMs()));
        return sb.toString();
    }

    /**
     * The index of the Kiln call computing ONNX Runtime node {@code ortName}'s values, or -1; a value that a
     * QuantizeLinear quantizes ({@code quantized}) stands for that QuantizeLinear's output too, which is what
     * ONNX Runtime's fused QLinearConv and Kiln's QDQ unit compute.
     */
    static int matchingCall(
            String ortName,
            Map<String, List<String>> outputsOf,
            Map<String, String> quantized,
            NetworkProfile calls,
            Map<Integer, FusedGroup> groups) {
        List<String> values = new ArrayList<>();
        for (String candidate : candidates(ortName)) {
            List<String> outs = outputsOf.get(candidate);
            if (outs != null) values.addAll(outs);
            values.add(candidate); // a name ONNX Runtime made up from an output's
        }
        for (String v : List.copyOf(values)) if (quantized.containsKey(v)) values.add(quantized.get(v));
        for (int c = 0; c < calls.calls().size(); c++) {
            FusedGroup g = groups.get(calls.calls().get(c).group());
            if (g == null) continue;
            for (Node n : g.nodes()) {
                for (String v : values) {
                    if (v.isEmpty()) continue;
                    if (n.name().equals(v) || n.name().startsWith(v + "/")) return c;
                }
            }
        }
        return -1;
    }

    /**
     * The name itself, and without each prefix and suffix ONNX Runtime adds (its QDQ transformer names a fused
     * QLinearConv {@code <conv>_token_<n>}).
     */
    static List<String> candidates(String ortName) {
        List<String> out = new ArrayList<>(List.of(ortName));
        for (String p : PREFIXES) if (ortName.startsWith(p)) out.add(ortName.substring(p.length()));
        for (String s : SUFFIXES) {
            for (String n : List.copyOf(out)) if (n.endsWith(s)) out.add(n.substring(0, n.length() - s.length()));
        }
        for (String n : List.copyOf(out)) {
            String bare = TOKEN.matcher(n).replaceFirst("");
            if (!bare.equals(n)) out.add(bare);
        }
        return out;
    }

    private static final Pattern TOKEN = Pattern.compile("_token_\\d+$");

    /**
     * For each value a QuantizeLinear reads, directly or through one Relu, that QuantizeLinear's output: a QDQ
     * model's conv writes a float value, which ONNX Runtime's and Kiln's fused units replace by its quantized one.
     */
    static Map<String, String> quantizedOutputs(ModelProto model) {
        Map<String, NodeProto> producer = new HashMap<>();
        Map<String, Integer> readers = new HashMap<>();
        for (NodeProto n : model.getGraph().getNodeList()) {
            for (String o : n.getOutputList()) producer.put(o, n);
            for (String in : n.getInputList()) readers.merge(in, 1, Integer::sum);
        }
        Map<String, String> out = new HashMap<>();
        for (NodeProto n : model.getGraph().getNodeList()) {
            if (!n.getOpType().equals("QuantizeLinear") || n.getInputCount() == 0) continue;
            String x = n.getInput(0);
            out.put(x, n.getOutput(0));
            NodeProto p = producer.get(x);
            if (p != null && p.getOpType().equals("Relu") && readers.get(x) == 1 && p.getInputCount() == 1)
                out.put(p.getInput(0), n.getOutput(0));
        }
        return out;
    }

    /** {@code " (a, b, ...)"}, or nothing for no items. */
    private static String listed(List<String> items) {
        return items.isEmpty() ? "" : " (" + String.join(", ", items) + ")";
    }

    private static String clip(String s, int n) {
        return s.length() <= n ? s : s.substring(0, n - 1) + "~";
    }

    private static double median(List<Double> xs) {
        return median(xs.stream().mapToDouble(Double::doubleValue).toArray());
    }

    /** The median of {@code xs} (the mean of the middle two for an even count); {@code xs} is left as it is. */
    static double median(double[] xs) {
        double[] a = xs.clone();
        Arrays.sort(a);
        return a.length % 2 == 1 ? a[a.length / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
    }
}
