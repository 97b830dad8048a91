package dev.kiln.samples.docs;

import dev.kiln.samples.docs.OperatorCatalog.Entry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes docs/OPERATORS.md, the table of Kiln's operators, from the code ({@link OperatorCatalog}):
 * {@code ./kiln operators} regenerates it, and {@code OperatorTableTest} fails when the committed
 * file differs from what this would write.
 */
public final class OperatorTable {
    private OperatorTable() {}

    /** The command that regenerates the file, as the stale-table test tells it. */
    public static final String COMMAND = "./kiln operators";

    /** Writes the table to {@code args[0]} (default docs/OPERATORS.md, relative to the working directory). */
    public static void main(String[] args) throws IOException {
        Path out = Path.of(args.length > 0 ? args[0] : "docs/OPERATORS.md");
        Files.writeString(out, render(), StandardCharsets.UTF_8);
        System.out.println("wrote " + out.toAbsolutePath().normalize() + " ("
                + OperatorCatalog.library().size() + " library operators, "
                + OperatorCatalog.graphOps().size() + " graph ops)");
    }

    /** The whole Markdown page. */
    public static String render() {
        StringBuilder sb = new StringBuilder();
        sb.append("# Operators\n\n")
                .append("<!-- Generated from the code by `")
                .append(COMMAND)
                .append("` (dev.kiln.samples.docs.OperatorTable); do not edit by hand.\n")
                .append("     Each description is the operator's @Operator annotation. -->\n\n")
                .append("Kiln's operator library (`dev.kiln.nn`, module `dsl`) builds tensors with the DSL, so every\n")
                .append("operator can be scheduled, tuned and fused like a computation of your own. Each method\n")
                .append("returns one `Tensor` unless its signature says otherwise; the Javadoc has the details\n")
                .append("(shapes, dtypes, what is rejected). The graph ops (`dev.kiln.graph.Op`, module `lowering`)\n")
                .append("are the nodes of a network `Graph`; each one calls the library.\n\n");
        List<Entry> library = OperatorCatalog.library();
        sb.append("## Operator library (`dev.kiln.nn`)\n\n");
        String owner = null;
        for (Entry e : library) {
            if (!e.owner().equals(owner)) {
                owner = e.owner();
                sb.append("\n### `").append(owner).append("`\n\n");
                sb.append("| Operator | Signatures | What it computes |\n|---|---|---|\n");
            }
            row(sb, e);
        }
        sb.append("\n## Graph ops (`dev.kiln.graph.Op`)\n\n");
        sb.append("| Op | Record | What it computes |\n|---|---|---|\n");
        for (Entry e : OperatorCatalog.graphOps()) row(sb, e);
        return sb.toString();
    }

    private static void row(StringBuilder sb, Entry e) {
        sb.append("| `").append(e.name()).append("` | ");
        for (int i = 0; i < e.signatures().size(); i++) {
            if (i > 0) sb.append("<br>");
            sb.append('`').append(e.signatures().get(i)).append('`');
        }
        sb.append(" | ").append(cell(e.summary())).append(" |\n");
    }

    /** A table cell: a '|' would end it. */
    private static String cell(String s) {
        return s.replace("|", "\\|");
    }
}
