package dev.kiln.cuda.compile;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.kiln.ir.KilnException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * NVRTC, CUDA's runtime compiler of CUDA C to PTX, called through Panama ({@code java.lang.foreign})
 * against whatever {@code libnvrtc.so.*} is installed ({@link NvrtcLibrary} finds the newest), so
 * that neither a fixed soname (JCuda's binding needs {@code libnvrtc.so.12}) nor a GPU is needed.
 * The library is probed once, on first use; {@link #availability()} says plainly whether it loaded
 * and, if not, why. Compiling needs no device: the PTX targets a virtual architecture
 * ({@code compute_90} for {@code sm_90}) and the driver finishes it at module load.
 */
public final class Nvrtc {
    private Nvrtc() {}

    /** Whether NVRTC is usable here: the library, its version, or the reason it is not. */
    public record Availability(boolean available, Path library, String version, String reason) {
        @Override
        public String toString() {
            return available ? "NVRTC " + version + " (" + library + ")" : "NVRTC unavailable: " + reason;
        }
    }

    private record Api(
            MethodHandle version,
            MethodHandle create,
            MethodHandle compile,
            MethodHandle ptxSize,
            MethodHandle ptx,
            MethodHandle logSize,
            MethodHandle log,
            MethodHandle destroy,
            MethodHandle errorString,
            MethodHandle numArchs,
            MethodHandle archs) {}

    private static final class Holder {
        static final Availability AVAILABILITY;
        static final Api API;

        static {
            Availability a;
            Api api = null;
            var found = NvrtcLibrary.newest();
            if (found.isEmpty()) {
                a = new Availability(
                        false,
                        null,
                        null,
                        "no libnvrtc.so.* in " + NvrtcLibrary.searchDirectories()
                                + " (install the CUDA toolkit, set kiln.nvrtc.path / KILN_NVRTC_PATH, or run "
                                + "scripts/fetch-nvrtc.sh)");
            } else {
                Path lib = found.get().path();
                try {
                    NvrtcLibrary.builtinsBeside(lib).ifPresent(b -> SymbolLookup.libraryLookup(b, Arena.global()));
                    api = bind(SymbolLookup.libraryLookup(lib, Arena.global()));
                    a = new Availability(true, lib, versionOf(api), null);
                } catch (RuntimeException | Error e) {
                    api = null;
                    a = new Availability(false, lib, null, "cannot load " + lib + ": " + e);
                }
            }
            AVAILABILITY = a;
            API = api;
        }
    }

    /** The result of the one probe of this process. */
    public static Availability availability() {
        return Holder.AVAILABILITY;
    }

    private static Api api() {
        if (Holder.API == null) throw new KilnException(Holder.AVAILABILITY.toString());
        return Holder.API;
    }

    private static Api bind(SymbolLookup l) {
        Linker linker = Linker.nativeLinker();
        java.util.function.BiFunction<String, FunctionDescriptor, MethodHandle> h = (name, fd) -> linker.downcallHandle(
                l.find(name).orElseThrow(() -> new IllegalStateException("symbol " + name + " not found")), fd);
        FunctionDescriptor ptrPtr = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);
        return new Api(
                h.apply("nvrtcVersion", ptrPtr),
                h.apply(
                        "nvrtcCreateProgram",
                        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS)),
                h.apply("nvrtcCompileProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS)),
                h.apply("nvrtcGetPTXSize", ptrPtr),
                h.apply("nvrtcGetPTX", ptrPtr),
                h.apply("nvrtcGetProgramLogSize", ptrPtr),
                h.apply("nvrtcGetProgramLog", ptrPtr),
                h.apply("nvrtcDestroyProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS)),
                h.apply("nvrtcGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT)),
                h.apply("nvrtcGetNumSupportedArchs", FunctionDescriptor.of(JAVA_INT, ADDRESS)),
                h.apply("nvrtcGetSupportedArchs", FunctionDescriptor.of(JAVA_INT, ADDRESS)));
    }

    private static String versionOf(Api api) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment major = a.allocate(JAVA_INT), minor = a.allocate(JAVA_INT);
            check(api, (int) api.version().invokeExact(major, minor), "nvrtcVersion");
            return major.get(JAVA_INT, 0) + "." + minor.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw t instanceof RuntimeException r ? r : new IllegalStateException(t);
        }
    }

    /** The NVRTC version, e.g. "12.4". */
    public static String version() {
        api();
        return Holder.AVAILABILITY.version();
    }

    /** The compute capabilities this NVRTC can compile for (75, 80, ..., 90, ...). */
    public static List<Integer> supportedArchs() {
        Api api = api();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment n = a.allocate(JAVA_INT);
            check(api, (int) api.numArchs().invokeExact(n), "nvrtcGetNumSupportedArchs");
            MemorySegment archs = a.allocate(JAVA_INT, n.get(JAVA_INT, 0));
            check(api, (int) api.archs().invokeExact(archs), "nvrtcGetSupportedArchs");
            List<Integer> out = new ArrayList<>();
            for (int i = 0; i < n.get(JAVA_INT, 0); i++) out.add(archs.getAtIndex(JAVA_INT, i));
            return out;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Compiles CUDA C to PTX for compute capability {@code cc} (90 for sm_90) with NVRTC options
     * ({@code --fmad=false}, {@code --include-path=...}); the architecture option is added here.
     * Throws {@link KilnException} with NVRTC's log and the source lines it names on failure.
     */
    public static String compile(String source, String name, int cc, List<String> options) {
        Api api = api();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment progPtr = a.allocate(ADDRESS);
            check(
                    api,
                    (int) api.create()
                            .invokeExact(
                                    progPtr,
                                    a.allocateFrom(source),
                                    a.allocateFrom(name),
                                    0,
                                    MemorySegment.NULL,
                                    MemorySegment.NULL),
                    "nvrtcCreateProgram");
            MemorySegment prog = progPtr.get(ADDRESS, 0);
            try {
                List<String> opts = new ArrayList<>(options);
                opts.add("--gpu-architecture=compute_" + cc);
                MemorySegment optv = a.allocate(ADDRESS, opts.size());
                for (int i = 0; i < opts.size(); i++) optv.setAtIndex(ADDRESS, i, a.allocateFrom(opts.get(i)));
                int rc = (int) api.compile().invokeExact(prog, opts.size(), optv);
                String log = log(api, a, prog);
                if (rc != 0) {
                    throw new KilnException("NVRTC " + Holder.AVAILABILITY.version() + " failed to compile '" + name
                            + "' (" + errorString(api, rc) + ") with " + opts + ":\n" + log + "\n"
                            + Sources.numbered(source, log));
                }
                MemorySegment size = a.allocate(JAVA_LONG);
                check(api, (int) api.ptxSize().invokeExact(prog, size), "nvrtcGetPTXSize");
                MemorySegment ptx = a.allocate(size.get(JAVA_LONG, 0));
                check(api, (int) api.ptx().invokeExact(prog, ptx), "nvrtcGetPTX");
                return ptx.getString(0, StandardCharsets.UTF_8);
            } finally {
                int ignored = (int) api.destroy().invokeExact(progPtr);
            }
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static String log(Api api, Arena a, MemorySegment prog) throws Throwable {
        MemorySegment size = a.allocate(JAVA_LONG);
        check(api, (int) api.logSize().invokeExact(prog, size), "nvrtcGetProgramLogSize");
        long n = size.get(JAVA_LONG, 0);
        if (n <= 1) return "";
        MemorySegment log = a.allocate(n);
        check(api, (int) api.log().invokeExact(prog, log), "nvrtcGetProgramLog");
        return log.getString(0, StandardCharsets.UTF_8);
    }

    private static void check(Api api, int rc, String what) throws Throwable {
        if (rc != 0) throw new KilnException(what + " failed: " + errorString(api, rc));
    }

    private static String errorString(Api api, int rc) throws Throwable {
        MemorySegment s = (MemorySegment) api.errorString().invokeExact(rc);
        return s.reinterpret(256).getString(0, StandardCharsets.US_ASCII) + " (" + rc + ")";
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) return r;
        if (t instanceof Error e) throw e;
        return new KilnException("NVRTC call failed: " + t);
    }
}
