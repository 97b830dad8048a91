package dev.kiln.jit;

import dev.kiln.ir.KilnException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * Linux's permission for the AMX tile data state. A process may execute AMX instructions only after asking the
 * kernel for the {@code XTILEDATA} state component once ({@code arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)},
 * Linux 5.16 and later); without it the first tile instruction kills the process with SIGILL. The request is made
 * through Panama's {@code syscall} once per process, when the LLVM backend first compiles an AMX kernel on a host
 * that has AMX; a refusal is an error that names the call and its errno, never a silent fallback.
 */
public final class AmxPermission {
    /** x86-64's system call number of {@code arch_prctl}. */
    static final long SYS_ARCH_PRCTL = 158;

    /** {@code ARCH_REQ_XCOMP_PERM} of {@code <asm/prctl.h>}. */
    static final long ARCH_REQ_XCOMP_PERM = 0x1023;

    /** The XSAVE state component of the tile data. */
    static final long XFEATURE_XTILEDATA = 18;

    private static String refused;
    private static boolean granted;

    private AmxPermission() {}

    /** Whether this machine's CPU reports AMX tiles ({@code amx-tile} among LLVM's host features). */
    public static boolean hostHasAmx() {
        return LlvmBackend.hostTarget().hasFeature("amx-tile");
    }

    /**
     * Asks for the tile data state once per process; later calls return at once, or throw the first refusal again.
     *
     * @throws KilnException naming the call and the errno when the kernel refuses (no AMX, or a kernel before 5.16)
     */
    public static synchronized void request() {
        if (granted) return;
        if (refused != null) throw new KilnException(refused);
        String os = System.getProperty("os.name", "");
        String arch = System.getProperty("os.arch", "");
        if (!os.startsWith("Linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            refused = "AMX: the tile data permission is requested through Linux's arch_prctl on x86-64; this is " + os
                    + " on " + arch;
            throw new KilnException(refused);
        }
        long rc;
        int errno;
        try (Arena arena = Arena.ofConfined()) {
            Linker linker = Linker.nativeLinker();
            StructLayout state = Linker.Option.captureStateLayout();
            VarHandle errnoHandle = state.varHandle(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));
            MethodHandle syscall = linker.downcallHandle(
                    linker.defaultLookup()
                            .find("syscall")
                            .orElseThrow(() ->
                                    new KilnException("AMX: the C library has no 'syscall' to request the tile state")),
                    FunctionDescriptor.of(
                            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
                    Linker.Option.firstVariadicArg(1),
                    Linker.Option.captureCallState("errno"));
            MemorySegment captured = arena.allocate(state);
            rc = (long) syscall.invokeExact(captured, SYS_ARCH_PRCTL, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA);
            errno = (int) errnoHandle.get(captured, 0L);
        } catch (KilnException e) {
            refused = e.getMessage();
            throw e;
        } catch (Throwable t) {
            refused = "AMX: arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) could not be called: " + t;
            throw new KilnException(refused);
        }
        if (rc != 0) {
            refused = "AMX: Linux refused the tile data state (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) = "
                    + rc + ", errno " + errno + "); AMX kernels cannot run in this process (the CPU lacks AMX, or the "
                    + "kernel is older than 5.16)";
            throw new KilnException(refused);
        }
        granted = true;
    }
}
