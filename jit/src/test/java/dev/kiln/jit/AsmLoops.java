package dev.kiln.jit;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The hot loop of x86 assembly as LLVM prints it (AT&amp;T syntax): the smallest range from a label
 * to a later branch back to it that contains a given instruction, and its instruction mix (the
 * intrinsic, 512-bit loads, stores and broadcasts, 32-to-64-bit sign extensions).
 */
final class AsmLoops {
    private AsmLoops() {}

    private static final Pattern LABEL = Pattern.compile("^(\\.?L[\\w.$]+):");
    private static final Pattern JUMP = Pattern.compile("^\\s*j\\w+\\s+(\\.?L[\\w.$]+)\\s*$");
    /** A store of a zmm register: {@code vmov... %zmmN, <memory>}. */
    private static final Pattern ZMM_STORE = Pattern.compile("^\\s*vmov\\w*\\s+%zmm\\d+,\\s*[^%\\s]");
    /** A load into a zmm register: {@code vmov... <memory>, %zmmN}, the address maybe indexed {@code (%rax,%rcx)}. */
    private static final Pattern ZMM_LOAD = Pattern.compile("^\\s*vmov\\w*\\s+[^%\\s]\\S*\\),\\s*%zmm\\d+");

    /** The instruction mix of one loop. */
    record Loop(
            String label,
            int instructions,
            int intrinsic,
            int intrinsicFromMemory,
            int zmmLoads,
            int zmmStores,
            int broadcasts,
            int signExtensions,
            int span) {
        @Override
        public String toString() {
            return String.format(
                    "loop %s: %d instructions, %d x the intrinsic (%d with a memory operand), %d zmm loads,"
                            + " %d zmm stores, %d broadcasts, %d sign extensions",
                    label,
                    instructions,
                    intrinsic,
                    intrinsicFromMemory,
                    zmmLoads,
                    zmmStores,
                    broadcasts,
                    signExtensions);
        }
    }

    /** The innermost loop containing {@code mnemonic}, or null when no loop does. */
    static Loop hot(String asm, String mnemonic) {
        List<Loop> all = innermost(asm, mnemonic);
        Loop best = null;
        for (Loop l : all) if (best == null || l.span < best.span) best = l;
        return best;
    }

    /**
     * Every loop containing {@code mnemonic} that holds no smaller such loop (a kernel with a row
     * tail has one for the full tiles and one for the tail), in the assembly's order.
     */
    static List<Loop> innermost(String asm, String mnemonic) {
        String[] lines =
                asm.substring(Math.max(0, asm.indexOf("; ---- assembly"))).split("\n");
        List<int[]> loops = new ArrayList<>();
        java.util.Map<String, Integer> labels = new java.util.HashMap<>();
        for (int i = 0; i < lines.length; i++) {
            var l = LABEL.matcher(lines[i]);
            if (l.find()) labels.put(l.group(1), i);
            var j = JUMP.matcher(lines[i]);
            if (j.find() && labels.containsKey(j.group(1))) loops.add(new int[] {labels.get(j.group(1)), i});
        }
        List<int[]> with = new ArrayList<>();
        for (int[] lp : loops) {
            boolean has = false;
            for (int i = lp[0]; i <= lp[1] && !has; i++) has = isInstr(lines[i], mnemonic);
            if (has) with.add(lp);
        }
        List<Loop> out = new ArrayList<>();
        for (int[] lp : with) {
            boolean holdsSmaller = false;
            for (int[] o : with) {
                if (o != lp && o[0] >= lp[0] && o[1] <= lp[1] && o[1] - o[0] < lp[1] - lp[0]) holdsSmaller = true;
            }
            if (!holdsSmaller) out.add(count(lines, lp, mnemonic));
        }
        return out;
    }

    private static Loop count(String[] lines, int[] best, String mnemonic) {
        int n = 0, in = 0, inMem = 0, ld = 0, st = 0, bc = 0, sx = 0;
        for (int i = best[0] + 1; i <= best[1]; i++) {
            String s = lines[i];
            String t = s.strip();
            if (t.isEmpty() || t.startsWith("#") || t.startsWith(".") || t.endsWith(":")) continue;
            n++;
            if (isInstr(s, mnemonic)) in++;
            if (isInstr(s, mnemonic) && t.contains("(")) inMem++;
            if (ZMM_STORE.matcher(s).find()) st++;
            if (ZMM_LOAD.matcher(s).find()) ld++;
            if (t.startsWith("vpbroadcast") || t.startsWith("vbroadcast")) bc++;
            if (t.startsWith("movslq") || t.startsWith("movsxd") || t.startsWith("cltq")) sx++;
        }
        return new Loop(lines[best[0]].strip(), n, in, inMem, ld, st, bc, sx, best[1] - best[0]);
    }

    private static boolean isInstr(String line, String mnemonic) {
        String t = line.strip();
        return t.startsWith(mnemonic + " ") || t.startsWith(mnemonic + "\t");
    }
}
