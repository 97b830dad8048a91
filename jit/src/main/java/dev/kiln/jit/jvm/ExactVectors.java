package dev.kiln.jit.jvm;

import static org.objectweb.asm.Opcodes.CHECKCAST;
import static org.objectweb.asm.Opcodes.H_INVOKESTATIC;
import static org.objectweb.asm.Opcodes.INVOKEVIRTUAL;
import static org.objectweb.asm.Opcodes.SWAP;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import java.lang.invoke.MethodHandles;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;
import org.objectweb.asm.ConstantDynamic;
import org.objectweb.asm.Handle;
import org.objectweb.asm.MethodVisitor;

/**
 * Vector values read back from locals, told C2 their exact class, so that no Vector API call in a kernel
 * depends on a type profile.
 *
 * <p>The generated code calls {@code FloatVector.add}, {@code mul}, {@code fma}, {@code intoMemorySegment}...
 * on receivers it declares as {@code FloatVector}. Those methods are final and call abstract ones
 * ({@code lanewise}, {@code intoMemorySegment0}) implemented by the species' class ({@code Float512Vector}).
 * C2 inlines the abstract call, and so intrinsifies it, only when it knows the receiver's class: exactly, from
 * the value's own type, or from a type profile. A value produced by an inlined Vector API call has its exact
 * type, but a value read from a local at a loop head (a register tile's accumulators across the reduction
 * loop, loads kept by {@link LoadReuse}) has only its declared type, so C2 looked the class up in the profile of
 * the JDK's {@code FloatVector.add} (bci 5, its {@code lanewise} call), which that JVM had or had not collected:
 * compiled at tier 2 (no type profile) while C2's queue was long, it had none, and the kernel's 16 accumulator
 * updates became virtual calls boxing a vector each (read with {@code -XX:+LogCompilation}: {@code inline_fail
 * reason='virtual call'} at {@code FloatVector::add} bci 5, 22 times in the slow JVM, none in the fast one).
 * Whether a JVM got the fast or the slow code was a race between the kernel's warm-up and the JDK's own
 * compilations.
 *
 * <p>{@link #exact} follows every such read with {@code Class.cast} of the species' vector class (a dynamic
 * constant of the kernel class, {@link #vectorClass}): C2 intrinsifies {@code Class.cast} of a constant class
 * into a type check whose result has that final class's exact type, folds the check where the type is already
 * known, and then binds every call on the value statically. Off with {@code -Dkiln.jvm.exactVectors=false}
 * (read at each compile, for A/B measurements).
 */
final class ExactVectors {
    private ExactVectors() {}

    private static final Handle BOOTSTRAP = new Handle(
            H_INVOKESTATIC,
            "dev/kiln/jit/jvm/ExactVectors",
            "vectorClass",
            "(Ljava/lang/invoke/MethodHandles$Lookup;Ljava/lang/String;Ljava/lang/Class;Ljava/lang/String;I)"
                    + "Ljava/lang/Class;",
            false);

    /** Whether the generator casts vectors read from locals to their exact class (default on). */
    static boolean enabled() {
        return !"false".equals(System.getProperty("kiln.jvm.exactVectors"));
    }

    /**
     * After the vector of {@code bits} bits of {@code t} on top of the stack: casts it to its species'
     * class (a no-op at run time that gives C2 the exact type), leaving it typed as {@code FloatVector} etc.
     */
    static void exact(MethodVisitor mv, DType t, int bits) {
        if (!enabled()) return;
        mv.visitLdcInsn(new ConstantDynamic("vectorClass", "Ljava/lang/Class;", BOOTSTRAP, t.name(), bits));
        mv.visitInsn(SWAP);
        mv.visitMethodInsn(INVOKEVIRTUAL, "java/lang/Class", "cast", "(Ljava/lang/Object;)Ljava/lang/Object;", false);
        mv.visitTypeInsn(CHECKCAST, VectorLanes.cls(t));
    }

    /**
     * Bootstrap of the dynamic constant: the class of the vectors of {@code bits} bits of {@code dtype} (a
     * {@link DType} name), e.g. {@code Float512Vector} for ({@code FLOAT32}, 512).
     */
    static Class<?> vectorClass(MethodHandles.Lookup lookup, String name, Class<?> type, String dtype, int bits) {
        Class<?> element =
                switch (DType.valueOf(dtype)) {
                    case FLOAT32 -> float.class;
                    case FLOAT64 -> double.class;
                    case INT32 -> int.class;
                    case INT64 -> long.class;
                    default -> throw new KilnException("no Vector API class for " + dtype);
                };
        return VectorSpecies.of(element, VectorShape.forBitSize(bits)).zero().getClass();
    }
}
