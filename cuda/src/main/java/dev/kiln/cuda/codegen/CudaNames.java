package dev.kiln.cuda.codegen;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.Var;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

/**
 * C identifiers for the variables and buffers of one CUDA module. Kiln names may hold dots and
 * {@code @} ({@code i.0@j.0@}, {@code A.shared}) and two objects may share a name (variables and
 * buffers compare by identity), so each object gets a sanitised name, made unique with a numeric
 * suffix, and keeps it for the whole module. Views of a buffer share the name of their base.
 */
final class CudaNames {
    /** C and CUDA words a generated name must not take. */
    private static final Set<String> RESERVED = Set.of(
            "auto",
            "bool",
            "break",
            "case",
            "char",
            "const",
            "continue",
            "default",
            "do",
            "double",
            "else",
            "enum",
            "extern",
            "float",
            "for",
            "goto",
            "if",
            "inline",
            "int",
            "long",
            "register",
            "return",
            "short",
            "signed",
            "sizeof",
            "static",
            "struct",
            "switch",
            "typedef",
            "union",
            "unsigned",
            "void",
            "volatile",
            "while",
            "class",
            "new",
            "delete",
            "this",
            "template",
            "typename",
            "namespace",
            "using",
            "true",
            "false",
            "threadIdx",
            "blockIdx",
            "blockDim",
            "gridDim",
            "warpSize",
            "min",
            "max",
            "abs",
            "exp",
            "log",
            "sqrt",
            "pow",
            "erf",
            "tanh",
            "floor",
            "ceil",
            "fma",
            "half",
            "dim3",
            "asm",
            "operator",
            "private",
            "public",
            "friend",
            "virtual",
            "mutable",
            "explicit",
            "export",
            "restrict");

    private final Set<String> taken = new HashSet<>();
    private final Map<Var, String> vars = new IdentityHashMap<>();
    private final Map<Buffer, String> buffers = new IdentityHashMap<>();

    /** Reserves a name (a kernel's, a helper's) so that no variable or buffer takes it. */
    String reserve(String raw) {
        return fresh(raw);
    }

    String var(Var v) {
        return vars.computeIfAbsent(v, x -> fresh(x.name()));
    }

    String buffer(Buffer b) {
        return buffers.computeIfAbsent(b.base(), x -> fresh(x.name()));
    }

    private String fresh(String raw) {
        String base = sanitize(raw);
        String s = base;
        for (int k = 1; taken.contains(s); k++) s = base + "_" + k;
        taken.add(s);
        return s;
    }

    /**
     * A valid C identifier for {@code raw}: runs of other characters become one underscore,
     * trailing underscores go, a leading digit or a reserved word gets a prefix, and names that
     * C reserves (two underscores, or underscore and a capital) or Kiln's helpers use
     * ({@code kiln_}) are moved out of the way.
     */
    static String sanitize(String raw) {
        StringBuilder sb = new StringBuilder();
        boolean lastUnderscore = false;
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
            if (ok) {
                sb.append(c);
                lastUnderscore = false;
            } else if (!lastUnderscore) {
                sb.append('_');
                lastUnderscore = true;
            }
        }
        while (!sb.isEmpty() && sb.charAt(sb.length() - 1) == '_') sb.setLength(sb.length() - 1);
        while (!sb.isEmpty() && sb.charAt(0) == '_') sb.deleteCharAt(0);
        String s = sb.toString();
        if (s.isEmpty()) s = "v";
        if (Character.isDigit(s.charAt(0)) || RESERVED.contains(s) || s.startsWith("kiln")) s = "v_" + s;
        return s;
    }
}
