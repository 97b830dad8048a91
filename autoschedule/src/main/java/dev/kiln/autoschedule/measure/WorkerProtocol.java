package dev.kiln.autoschedule.measure;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamWriteConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.layout.PackedLayout;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.json.PrimFuncJson;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The messages between {@link ProcessMeasurer} and {@link MeasureWorker}: one JSON object per
 * line. The parent writes requests to the worker's standard input:
 *
 * <pre>
 * {"op": "measure", "id": 7, "target": "cpu -mtriple=...", "workload": "/tmp/.../w1.bin",
 *  "options": {"repeats": 5, "number": 1, ...}, "func": {...PrimFuncJson...}}
 * {"op": "exit"}
 * </pre>
 *
 * The worker answers on its standard output, each line starting with {@link #PREFIX} (anything
 * else on that stream is diagnostics): first {@code {"ready": true, "protocol": ..., "pid": ...}},
 * then one reply per request, {@code {"id": 7, "error": "NONE", "message": "", "costs": [...],
 * "compile_s": 0.12, "exiting": false}}; {@code exiting} says the worker stops after this reply
 * (after an error that leaves the JVM unusable) and must be restarted.
 */
final class WorkerProtocol {
    static final String PREFIX = "@kiln-measure ";
    static final String VERSION = "kiln-measure-1";

    /** Programs nest deeply; a request carries one, so the limits are PrimFuncJson's. */
    private static final ObjectMapper JSON = new ObjectMapper(JsonFactory.builder()
            .streamReadConstraints(
                    StreamReadConstraints.builder().maxNestingDepth(100_000).build())
            .streamWriteConstraints(
                    StreamWriteConstraints.builder().maxNestingDepth(100_000).build())
            .build());

    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private WorkerProtocol() {}

    /** A reply of the worker. */
    record Reply(long id, MeasureError error, String message, double[] costs, double compileSeconds, boolean exiting) {}

    static String measureRequest(long id, String target, String workloadFile, MeasureOptions o, PrimFunc f) {
        return measureRequest(id, target, workloadFile, o, f, Map.of());
    }

    /**
     * A measure request whose program reads the arguments at the keys of {@code layouts} packed:
     * {@code "layouts": [{"arg": 1, "shape": [768, 3072], "names": ["j", "k"], "dims": [[0, 16, 48], ...]}]},
     * each dim {@code [axis, stride, extent]} of {@link PackedLayout.Dim}.
     */
    static String measureRequest(
            long id,
            String target,
            String workloadFile,
            MeasureOptions o,
            PrimFunc f,
            Map<Integer, PackedLayout> layouts) {
        ObjectNode r = F.objectNode();
        r.put("op", "measure").put("id", id).put("target", target).put("workload", workloadFile);
        r.set("options", options(o));
        if (!layouts.isEmpty()) {
            ArrayNode ls = r.putArray("layouts");
            for (var e : new TreeMap<>(layouts).entrySet()) {
                ObjectNode l = ls.addObject().put("arg", e.getKey());
                ArrayNode shape = l.putArray("shape");
                for (long x : e.getValue().originalShape()) shape.add(x);
                ArrayNode names = l.putArray("names");
                e.getValue().axisNames().forEach(names::add);
                ArrayNode dims = l.putArray("dims");
                for (PackedLayout.Dim d : e.getValue().dims())
                    dims.addArray().add(d.axis()).add(d.stride()).add(d.extent());
            }
        }
        r.set("func", PrimFuncJson.toTree(f));
        return write(r);
    }

    /** The packed layouts of a measure request, by argument position (empty when it has none). */
    static Map<Integer, PackedLayout> layouts(JsonNode request) {
        Map<Integer, PackedLayout> out = new TreeMap<>();
        for (JsonNode l : request.path("layouts")) {
            JsonNode shapeNode = l.path("shape");
            long[] shape = new long[shapeNode.size()];
            for (int i = 0; i < shape.length; i++) shape[i] = shapeNode.get(i).asLong();
            List<String> names = new ArrayList<>();
            l.path("names").forEach(n -> names.add(n.asText()));
            List<PackedLayout.Dim> dims = new ArrayList<>();
            for (JsonNode d : l.path("dims"))
                dims.add(new PackedLayout.Dim(
                        d.get(0).asInt(), d.get(1).asLong(), d.get(2).asLong()));
            out.put(l.path("arg").asInt(), new PackedLayout(shape, dims, names));
        }
        return out;
    }

    /**
     * One request for several programs (each a {@link #measureRequest} line), compiled on {@code threads}
     * threads before any is timed ({@link WorkerBatch}): {@code {"op": "batch", "threads": 2, "programs": [...]}}.
     */
    static String batchRequest(List<String> programRequests, int threads) {
        StringBuilder sb = new StringBuilder("{\"op\":\"batch\",\"threads\":")
                .append(BuildThreads.check(threads))
                .append(",\"programs\":[");
        for (int i = 0; i < programRequests.size(); i++) {
            if (i > 0) sb.append(',');
            sb.append(programRequests.get(i));
        }
        return sb.append("]}").toString();
    }

    /** The progress line of a batch: program {@code id} is built ({@code {"compiled": 7, "compile_s": 0.1}}). */
    static String compiled(long id, double compileSeconds) {
        return PREFIX + write(F.objectNode().put("compiled", id).put("compile_s", compileSeconds));
    }

    static String exitRequest() {
        return write(F.objectNode().put("op", "exit"));
    }

    static String ready(long pid) {
        return PREFIX
                + write(F.objectNode()
                        .put("ready", true)
                        .put("protocol", VERSION)
                        .put("pid", pid));
    }

    static String reply(Reply r) {
        ObjectNode o = F.objectNode();
        o.put("id", r.id()).put("error", r.error().name()).put("message", r.message());
        ArrayNode costs = o.putArray("costs");
        for (double c : r.costs()) costs.add(c);
        o.put("compile_s", r.compileSeconds()).put("exiting", r.exiting());
        return PREFIX + write(o);
    }

    static Reply parseReply(JsonNode o) {
        JsonNode costs = o.path("costs");
        double[] c = new double[costs.size()];
        for (int i = 0; i < c.length; i++) c[i] = costs.get(i).asDouble();
        return new Reply(
                o.path("id").asLong(-1),
                MeasureError.valueOf(o.path("error").asText()),
                o.path("message").asText(),
                c,
                o.path("compile_s").asDouble(),
                o.path("exiting").asBoolean());
    }

    static ObjectNode options(MeasureOptions o) {
        return F.objectNode()
                .put("repeats", o.repeats())
                .put("number", o.number())
                .put("warmup", o.warmup())
                .put("min_repeat_ms", o.minRepeatMs())
                .put("flush_cache", o.flushCache())
                .put("timeout_s", o.timeoutSeconds())
                .put("check", o.checkCorrectness())
                .put("rtol", o.rtol())
                .put("atol", o.atol())
                .put("seed", o.seed())
                .put("warmup_ms", o.warmupMs())
                .put("remeasure_top", o.remeasureTop())
                .put("remeasure_rounds", o.remeasureRounds());
    }

    static MeasureOptions options(JsonNode o) {
        return new MeasureOptions(
                o.path("repeats").asInt(),
                o.path("number").asInt(),
                o.path("warmup").asInt(),
                o.path("warmup_ms").asDouble(0),
                o.path("min_repeat_ms").asDouble(),
                o.path("flush_cache").asBoolean(),
                o.path("timeout_s").asDouble(),
                o.path("check").asBoolean(),
                o.path("rtol").asDouble(),
                o.path("atol").asDouble(),
                o.path("seed").asLong(),
                o.path("remeasure_top").asInt(0),
                o.path("remeasure_rounds").asInt(0));
    }

    /** Parses one line (without the prefix). */
    static JsonNode parse(String line) {
        try {
            return JSON.readTree(line);
        } catch (JsonProcessingException e) {
            throw new KilnException("malformed measure protocol line: " + e.getOriginalMessage());
        }
    }

    static String write(JsonNode n) {
        try {
            return JSON.writeValueAsString(n);
        } catch (JsonProcessingException e) {
            throw new KilnException("cannot write a measure protocol line: " + e.getOriginalMessage());
        }
    }
}
