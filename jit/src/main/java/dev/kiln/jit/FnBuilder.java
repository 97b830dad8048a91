package dev.kiln.jit;

import java.util.ArrayList;
import java.util.List;

/**
 * The text of one LLVM function under construction: a header, stack slots hoisted to the entry
 * block, and the instructions. Names are fresh per function ({@code %t12}, {@code L7}); the
 * current block is tracked so that phis can name their predecessors.
 */
final class FnBuilder {
    private final String header;
    private final StringBuilder allocas = new StringBuilder();
    private final StringBuilder body = new StringBuilder();
    private final List<String> comments = new ArrayList<>();
    private int next;
    private String current = "entry";
    private boolean terminated;

    /** {@code header} is the {@code define ...(...)} line without the opening brace. */
    FnBuilder(String header) {
        this.header = header;
    }

    /** A fresh SSA name. */
    String tmp() {
        return "%t" + next++;
    }

    /** Appends {@code %tN = rhs} and returns {@code %tN}. */
    String emit(String rhs) {
        String r = tmp();
        line(r + " = " + rhs);
        return r;
    }

    /** Appends one instruction that has no result. */
    void line(String instr) {
        if (terminated) {
            // unreachable code after a terminator still needs a block to live in
            block(label("dead"));
        }
        body.append("  ").append(instr).append('\n');
    }

    /** A fresh block name with a readable hint. */
    String label(String hint) {
        return hint + next++;
    }

    /** Starts block {@code name}. */
    void block(String name) {
        body.append(name).append(":\n");
        current = name;
        terminated = false;
    }

    /** Ends the current block with {@code br label %to}. */
    void br(String to) {
        line("br label %" + to);
        terminated = true;
    }

    /** Ends the current block with {@code br label %to, !llvm.loop loopId}: the back edge of loop {@code loopId}. */
    void br(String to, String loopId) {
        line("br label %" + to + ", !llvm.loop " + loopId);
        terminated = true;
    }

    /** Ends the current block with a conditional branch. */
    void condBr(String cond, String then, String otherwise) {
        line("br i1 " + cond + ", label %" + then + ", label %" + otherwise);
        terminated = true;
    }

    /** Ends the current block with {@code ret}. */
    void ret(String typeAndValue) {
        line("ret " + typeAndValue);
        terminated = true;
    }

    String currentBlock() {
        return current;
    }

    /** A stack slot in the entry block (so loops do not grow the stack). */
    String alloca(String type, long align) {
        String r = "%a" + next++;
        allocas.append("  ")
                .append(r)
                .append(" = alloca ")
                .append(type)
                .append(", align ")
                .append(align)
                .append('\n');
        return r;
    }

    /** A comment line placed above the function. */
    void comment(String c) {
        comments.add(c);
    }

    String text() {
        StringBuilder sb = new StringBuilder();
        for (String c : comments) sb.append("; ").append(c).append('\n');
        sb.append(header).append(" {\nentry:\n").append(allocas).append(body).append("}\n");
        return sb.toString();
    }
}
