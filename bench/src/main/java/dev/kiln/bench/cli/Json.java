package dev.kiln.bench.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.kiln.ir.KilnException;
import java.io.PrintWriter;

/** The CLI's {@code --json} output: one JSON document on standard output (Jackson). */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private Json() {}

    static void print(PrintWriter out, Object value) {
        try {
            out.println(MAPPER.writeValueAsString(value));
            out.flush();
        } catch (JsonProcessingException e) {
            throw new KilnException("--json: cannot write the result: " + e.getOriginalMessage());
        }
    }

    /** Infinity and NaN are not JSON numbers: they are written as null. */
    static Double num(double v) {
        return Double.isFinite(v) ? v : null;
    }
}
