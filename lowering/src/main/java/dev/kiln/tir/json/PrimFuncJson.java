package dev.kiln.tir.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamWriteConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kiln.ir.KilnException;
import dev.kiln.tir.PrimFunc;

/**
 * A lowered {@link PrimFunc} as JSON and back: how a program crosses a process boundary (the
 * auto-scheduler lowers in the tuner and sends the program to a measuring worker; the DAG it came
 * from holds Java objects that cannot be sent).
 *
 * <p>The form keeps everything the printer, the interpreter and the backends see: every statement
 * and expression node, every {@link dev.kiln.ir.DType}, and the identity of variables, buffers
 * (flat views included, as views of their base) and reducers. Objects with identity are listed
 * once in a symbol table, in an order where each one's definition only refers to earlier ones,
 * and are referred to by their index:
 *
 * <pre>
 * {"format": "kiln-primfunc-1", "name": "matmul",
 *  "symbols": [{"sym": "buffer", "name": "A", "dtype": "float32", "shape": [["int", "int32", 4]], ...},
 *              {"sym": "var", "name": "i", "dtype": "int32"}, ...],
 *  "params": [0, 2, 3],
 *  "body": ["for", 1, ["int", "int32", 0], ["int", "int32", 4], "serial", null, ["store", ...]]}
 * </pre>
 *
 * Expressions and statements are arrays whose first element names the node ({@link PrimFuncWriter}
 * lists them). Floating constants are JSON numbers, or the strings {@code "NaN"},
 * {@code "Infinity"} and {@code "-Infinity"}. A {@code TensorRead} belongs to the DSL, not the
 * loop IR, and cannot be written: lower the function first.
 */
public final class PrimFuncJson {
    /** The version written into every document. */
    public static final String FORMAT = "kiln-primfunc-1";

    /** Lowered programs nest deeply (long expression chains after unrolling): allow it. */
    static final ObjectMapper JSON = new ObjectMapper(JsonFactory.builder()
            .streamReadConstraints(
                    StreamReadConstraints.builder().maxNestingDepth(100_000).build())
            .streamWriteConstraints(
                    StreamWriteConstraints.builder().maxNestingDepth(100_000).build())
            .build());

    private PrimFuncJson() {}

    /** The function as a JSON tree. */
    public static ObjectNode toTree(PrimFunc f) {
        return PrimFuncWriter.write(f);
    }

    /** The function as one line of JSON. */
    public static String toJson(PrimFunc f) {
        try {
            return JSON.writeValueAsString(toTree(f));
        } catch (JsonProcessingException e) {
            throw new KilnException("cannot write function '" + f.name() + "' as JSON: " + e.getOriginalMessage());
        }
    }

    /** Reads a function written by {@link #toTree}. */
    public static PrimFunc fromTree(JsonNode tree) {
        return PrimFuncReader.read(tree);
    }

    /** Reads a function written by {@link #toJson}. */
    public static PrimFunc fromJson(String json) {
        JsonNode tree;
        try {
            tree = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new KilnException("not a " + FORMAT + " document: " + e.getOriginalMessage());
        }
        return fromTree(tree);
    }
}
