package dev.kiln.target;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Detects the host CPU without LLVM: the triple from the JVM's os.arch and os.name, the CPU name
 * from the vendor, family and model in {@code /proc/cpuinfo}, the features from its flags, the
 * cores from {@link Runtime#availableProcessors()} and the cache line from sysfs. Unknown models get
 * LLVM's micro-architecture levels ({@code x86-64-v2/v3/v4}) by feature, which every LLVM knows.
 */
final class HostCpu {
    private HostCpu() {}

    /** cpuinfo flag to LLVM feature, in the order the feature string lists them. */
    private static final String[][] FEATURES = {
        {"pni", "sse3"},
        {"ssse3", "ssse3"},
        {"sse4_1", "sse4.1"},
        {"sse4_2", "sse4.2"},
        {"popcnt", "popcnt"},
        {"avx", "avx"},
        {"avx2", "avx2"},
        {"fma", "fma"},
        {"f16c", "f16c"},
        {"bmi1", "bmi"},
        {"bmi2", "bmi2"},
        {"abm", "lzcnt"},
        {"movbe", "movbe"},
        {"avx512f", "avx512f"},
        {"avx512dq", "avx512dq"},
        {"avx512cd", "avx512cd"},
        {"avx512bw", "avx512bw"},
        {"avx512vl", "avx512vl"},
        {"avx512ifma", "avx512ifma"},
        {"avx512vbmi", "avx512vbmi"},
        {"avx512_vbmi2", "avx512vbmi2"},
        {"avx512_vnni", "avx512vnni"},
        {"avx512_bitalg", "avx512bitalg"},
        {"avx512_vpopcntdq", "avx512vpopcntdq"},
        {"avx512_bf16", "avx512bf16"},
        {"avx512_fp16", "avx512fp16"},
        {"avx_vnni", "avxvnni"},
        {"gfni", "gfni"},
        {"vaes", "vaes"},
        {"vpclmulqdq", "vpclmulqdq"},
        {"amx_tile", "amx-tile"},
        {"amx_bf16", "amx-bf16"},
        {"amx_int8", "amx-int8"},
    };

    static CpuTarget detect() {
        String arch = System.getProperty("os.arch", "");
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String sys = os.contains("mac") ? "apple-darwin" : os.contains("win") ? "pc-windows-msvc" : "unknown-linux-gnu";
        int cores = Runtime.getRuntime().availableProcessors();
        int line = cacheLine();
        boolean x86 = arch.equals("amd64") || arch.equals("x86_64");
        if (!x86) {
            String a = arch.equals("aarch64") || arch.equals("arm64") ? "aarch64" : arch;
            return new CpuTarget(a + "-" + sys, "generic", "", cores, 128, line);
        }
        Map<String, String> info = cpuinfo();
        Set<String> flags =
                new HashSet<>(List.of(info.getOrDefault("flags", "").trim().split("\\s+")));
        List<String> feats = new ArrayList<>();
        for (String[] f : FEATURES) if (flags.contains(f[0])) feats.add("+" + f[1]);
        int bits = flags.contains("avx512f") ? 512 : flags.contains("avx") ? 256 : 128;
        String cpu = cpuName(
                info.getOrDefault("vendor_id", ""), parse(info.get("cpu family")), parse(info.get("model")), flags);
        return new CpuTarget("x86_64-" + sys, cpu, String.join(",", feats), cores, bits, line);
    }

    /** The LLVM name of an x86 CPU. */
    static String cpuName(String vendor, int family, int model, Set<String> flags) {
        if (vendor.equals("AuthenticAMD")) {
            if (family == 0x1A) return "znver5";
            if (family == 0x19) {
                boolean zen4 = (model >= 0x10 && model <= 0x1F)
                        || (model >= 0x60 && model <= 0x7F)
                        || (model >= 0xA0 && model <= 0xAF);
                return zen4 ? "znver4" : "znver3";
            }
            if (family == 0x17) return model >= 0x30 ? "znver2" : "znver1";
        } else if (vendor.equals("GenuineIntel") && family == 6) {
            switch (model) {
                case 0xCF:
                    return "emeraldrapids";
                case 0x8F:
                    return "sapphirerapids";
                case 0xAD, 0xAE:
                    return "graniterapids";
                case 0x6A, 0x6C:
                    return "icelake-server";
                case 0x55:
                    return flags.contains("avx512_bf16")
                            ? "cooperlake"
                            : flags.contains("avx512_vnni") ? "cascadelake" : "skylake-avx512";
                default:
                    break;
            }
        }
        if (flags.containsAll(List.of("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"))) return "x86-64-v4";
        if (flags.containsAll(List.of("avx2", "fma", "bmi1", "bmi2", "movbe"))) return "x86-64-v3";
        if (flags.containsAll(List.of("sse4_2", "popcnt", "ssse3"))) return "x86-64-v2";
        return "x86-64";
    }

    private static int parse(String s) {
        if (s == null) return -1;
        try {
            return Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The fields of the first processor in /proc/cpuinfo (empty if it cannot be read). */
    private static Map<String, String> cpuinfo() {
        Map<String, String> m = new HashMap<>();
        try {
            for (String l : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (l.isBlank()) {
                    if (!m.isEmpty()) break;
                    continue;
                }
                int c = l.indexOf(':');
                if (c > 0)
                    m.putIfAbsent(l.substring(0, c).trim(), l.substring(c + 1).trim());
            }
        } catch (IOException | SecurityException e) {
            // no cpuinfo: the caller falls back to a generic CPU
        }
        return m;
    }

    private static int cacheLine() {
        try {
            int v = Integer.parseInt(
                    Files.readString(Path.of("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size"))
                            .trim());
            return v >= 8 && Integer.bitCount(v) == 1 ? v : 64;
        } catch (IOException | RuntimeException e) {
            return 64;
        }
    }
}
