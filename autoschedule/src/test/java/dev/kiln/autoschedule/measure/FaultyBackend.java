package dev.kiln.autoschedule.measure;

import dev.kiln.interp.Interpreter;
import dev.kiln.interp.Program;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * A test-only backend (registered in the test resources, so the measuring child finds it too)
 * that fails on purpose. It compiles for {@link #TARGET} only, and runs programs in the
 * interpreter unless the program is wrapped in a {@link #PRAGMA} pragma whose value names a
 * {@link Fault}.
 */
public final class FaultyBackend implements Backend {
    /** The only target this backend compiles for (no real backend claims its triple). */
    public static final CpuTarget TARGET = new CpuTarget("kilnfault-unknown-linux", "faulty", "", 1, 128, 64);
    /** The pragma key that selects a fault. */
    public static final String PRAGMA = "kiln_test_fault";

    /** What goes wrong. */
    public enum Fault {
        /** Nothing: the interpreter runs the program. */
        NONE,
        /** compile() throws. */
        COMPILE_ERROR,
        /** The JVM exits while compiling. */
        HALT_IN_COMPILE,
        /** call() throws. */
        THROW_AT_RUN,
        /** call() calls System.exit(13). */
        EXIT_AT_RUN,
        /** call() raises SIGSEGV through libc's raise(). */
        SEGFAULT_AT_RUN,
        /** call() never returns. */
        HANG_AT_RUN,
        /** call() writes a wrong first output element. */
        WRONG_AT_RUN,
        /** compile() never returns. */
        HANG_IN_COMPILE
    }

    @Override
    public String name() {
        return "faulty";
    }

    @Override
    public boolean supports(Target target) {
        return TARGET.equals(target);
    }

    /** The program with its fault attached. */
    public static PrimFunc withFault(PrimFunc f, Fault fault) {
        return f.withBody(new Pragma(PRAGMA, fault.ordinal(), f.body()));
    }

    @Override
    public CompiledKernel compile(PrimFunc func, Target target) {
        Fault fault = func.body() instanceof Pragma p && p.key().equals(PRAGMA)
                ? Fault.values()[(int) p.value()]
                : Fault.NONE;
        switch (fault) {
            case COMPILE_ERROR ->
                throw new KilnException("faulty backend: function '" + func.name() + "' refused on purpose");
            case HALT_IN_COMPILE -> Runtime.getRuntime().halt(21);
            case HANG_IN_COMPILE -> {
                while (true) {
                    try {
                        Thread.sleep(1000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
            default -> {}
        }
        Program program = Interpreter.compile(func);
        return new CompiledKernel() {
            @Override
            public void call(NDArray... args) {
                switch (fault) {
                    case THROW_AT_RUN -> throw new IllegalStateException("faulty kernel threw on purpose");
                    case EXIT_AT_RUN -> System.exit(13);
                    case SEGFAULT_AT_RUN -> raise(11);
                    case HANG_AT_RUN -> {
                        while (true) {
                            try {
                                Thread.sleep(1000);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                    }
                    default -> {}
                }
                program.run(args);
                if (fault == Fault.WRONG_AT_RUN) {
                    NDArray out = args[args.length - 1];
                    out.setDoubleFlat(out.getDoubleFlat(0) + 1, 0);
                }
            }

            @Override
            public String source() {
                return func.toString();
            }

            @Override
            public PrimFunc func() {
                return func;
            }

            @Override
            public Target target() {
                return target;
            }

            @Override
            public void close() {}
        };
    }

    @SuppressWarnings("restricted")
    private static void raise(int signal) {
        Linker linker = Linker.nativeLinker();
        MethodHandle raise = linker.downcallHandle(
                linker.defaultLookup().find("raise").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        try {
            int unused = (int) raise.invokeExact(signal);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
