package dev.kiln.jit;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The text of one LLVM module: function definitions in order and the declarations they need
 * (each declared once, by name).
 */
final class ModuleBuilder {
    private final String name;
    private final List<String> functions = new ArrayList<>();
    private final Map<String, String> declarations = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();
    private final List<String> metadata = new ArrayList<>();
    private String unrollDisable;

    ModuleBuilder(String name) {
        this.name = name;
    }

    /** Declares {@code @fn} with the given result and parameter types (once); returns {@code @fn}. */
    String declare(String fn, String ret, String params) {
        declarations.putIfAbsent(fn, "declare " + ret + " @" + fn + "(" + params + ")");
        return "@" + fn;
    }

    /** Declares a function with attributes after the parameter list (e.g. {@code nounwind}). */
    String declare(String fn, String ret, String params, String attrs) {
        declarations.putIfAbsent(fn, "declare " + ret + " @" + fn + "(" + params + ") " + attrs);
        return "@" + fn;
    }

    /**
     * A fresh loop id ({@code !N = distinct !{!N, !{"llvm.loop.unroll.disable"}}}) for the back edge of a loop LLVM
     * must not unroll ({@link StmtGen}).
     */
    String noUnrollLoop() {
        if (unrollDisable == null) {
            unrollDisable = "!" + metadata.size();
            metadata.add(unrollDisable + " = !{!\"llvm.loop.unroll.disable\"}");
        }
        String id = "!" + metadata.size();
        metadata.add(id + " = distinct !{" + id + ", " + unrollDisable + "}");
        return id;
    }

    void add(FnBuilder f) {
        functions.add(f.text());
    }

    /** A remark about the generated code, printed at the top of the module (a fallback, a choice). */
    void note(String n) {
        notes.add(n);
    }

    /** Adds {@code n} unless the module has it already. */
    void noteOnce(String n) {
        if (!notes.contains(n)) notes.add(n);
    }

    List<String> notes() {
        return List.copyOf(notes);
    }

    String text() {
        StringBuilder sb = new StringBuilder("; ModuleID = '").append(name).append("'\n");
        for (String n : notes) sb.append("; kiln: ").append(n).append('\n');
        sb.append('\n');
        for (String f : functions) sb.append(f).append('\n');
        for (String d : declarations.values()) sb.append(d).append('\n');
        for (String m : metadata) sb.append(m).append('\n');
        return sb.toString();
    }
}
