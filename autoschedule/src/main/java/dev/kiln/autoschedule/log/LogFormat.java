package dev.kiln.autoschedule.log;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kiln.ir.KilnException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;

/**
 * The JSON form of one {@link LogRecord}: one object on one line, fields in this order:
 *
 * <pre>{@code
 * {"v":"kiln-log-1","workload_key":"kiln-...","target":"cpu -mtriple=... -cores=2 ...",
 *  "hardware":[2,32,64,0,0,0,0,0],"steps":[["SP",...],...],"costs":[1.2E-4,1.1E-4,1.3E-4],
 *  "error":"NONE","error_msg":"","compile_s":0.21,"wall_s":0.35,"timestamp":"2026-01-02T03:04:05.678Z"}
 * }</pre>
 *
 * ({@code hardware} is Ansor's order: cores, vector bytes, cache line, shared memory, local
 * memory, threads per block, vthread extent, warp size.) A re-measurement of a program already in
 * the log ends with {@code ,"kind":"remeasure"}; a line without {@code kind} is a trial, so logs
 * written before re-measures existed read unchanged (and older readers take a re-measure for one
 * more trial of a program they already hold). A program adapted from a similar task's
 * ({@link dev.kiln.autoschedule.transfer.TransferPolicy}) ends with {@code ,"transfer_from":"<workload key>"},
 * which older readers ignore. A line that is not such an object, or
 * whose version this code does not read, is refused with a {@link KilnException} saying why.
 */
public final class LogFormat {
    /** The version this code writes and reads. */
    public static final String VERSION = "kiln-log-1";

    private static final ObjectMapper JSON = new ObjectMapper();

    private LogFormat() {}

    /** The record as one line of JSON, without the line break. */
    public static String toLine(LogRecord r) {
        ObjectNode o = JSON.createObjectNode();
        o.put("v", r.version());
        o.put("workload_key", r.workloadKey());
        o.put("target", r.target());
        ArrayNode hw = o.putArray("hardware");
        for (int h : r.hardware()) hw.add(h);
        o.set("steps", r.steps());
        ArrayNode costs = o.putArray("costs");
        for (double c : r.costs()) costs.add(c);
        o.put("error", r.errorKind());
        o.put("error_msg", r.errorMessage());
        o.put("compile_s", r.compileSeconds());
        o.put("wall_s", r.wallSeconds());
        o.put("timestamp", r.timestamp().toString());
        if (r.isRemeasure()) o.put("kind", r.kind());
        if (r.isTransferred()) o.put("transfer_from", r.transferFrom());
        try {
            return JSON.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a log record as JSON", e);
        }
    }

    /** Reads one line written by {@link #toLine}. */
    public static LogRecord parse(String line) {
        JsonNode o;
        try {
            o = JSON.readTree(line);
        } catch (JsonProcessingException e) {
            throw new KilnException("not JSON: " + e.getOriginalMessage());
        }
        if (o == null || !o.isObject()) throw new KilnException("not a JSON object");
        String version = text(o, "v");
        if (!version.equals(VERSION)) {
            throw new KilnException("log format '" + version + "' is not the one this Kiln reads (" + VERSION + ")");
        }
        JsonNode hwNode = array(o, "hardware");
        int[] hardware = new int[hwNode.size()];
        for (int i = 0; i < hardware.length; i++) {
            if (!hwNode.get(i).canConvertToInt())
                throw new KilnException("field 'hardware' holds a non-integer " + hwNode.get(i));
            hardware[i] = hwNode.get(i).intValue();
        }
        List<Double> costs = new ArrayList<>();
        for (JsonNode c : array(o, "costs")) {
            if (!c.isNumber()) throw new KilnException("field 'costs' holds a non-number " + c);
            costs.add(c.doubleValue());
        }
        Instant when;
        try {
            when = Instant.parse(text(o, "timestamp"));
        } catch (DateTimeParseException e) {
            throw new KilnException("field 'timestamp' is not an ISO-8601 instant: " + o.get("timestamp"));
        }
        return new LogRecord(
                version,
                text(o, "workload_key"),
                text(o, "target"),
                hardware,
                (ArrayNode) array(o, "steps"),
                costs,
                text(o, "error"),
                o.path("error_msg").asText(""),
                number(o, "compile_s"),
                number(o, "wall_s"),
                when,
                kind(o),
                o.path("transfer_from").asText(""));
    }

    /** {@code steps} as it reads back from its JSON text (Jackson picks int or long nodes by value). */
    static ArrayNode canonical(ArrayNode steps) {
        try {
            return (ArrayNode) JSON.readTree(JSON.writeValueAsString(steps));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot copy schedule steps through JSON", e);
        }
    }

    /** The record's kind: {@code "trial"} when the line has none (every line written before issue 13). */
    private static String kind(JsonNode o) {
        JsonNode n = o.get("kind");
        if (n == null) return LogRecord.TRIAL;
        if (!n.isTextual()) throw new KilnException("field 'kind' is not a string");
        return n.asText();
    }

    private static String text(JsonNode o, String field) {
        JsonNode n = o.get(field);
        if (n == null || !n.isTextual()) throw new KilnException("field '" + field + "' is missing or not a string");
        return n.asText();
    }

    private static JsonNode array(JsonNode o, String field) {
        JsonNode n = o.get(field);
        if (n == null || !n.isArray()) throw new KilnException("field '" + field + "' is missing or not an array");
        return n;
    }

    private static double number(JsonNode o, String field) {
        JsonNode n = o.get(field);
        if (n == null || !n.isNumber()) throw new KilnException("field '" + field + "' is missing or not a number");
        return n.doubleValue();
    }
}
