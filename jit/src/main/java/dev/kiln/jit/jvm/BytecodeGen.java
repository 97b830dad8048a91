package dev.kiln.jit.jvm;

import static org.objectweb.asm.Opcodes.*;

import dev.kiln.ir.Buffer;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.FieldInsnNode;
import org.objectweb.asm.tree.IincInsnNode;
import org.objectweb.asm.tree.InsnList;
import org.objectweb.asm.tree.InsnNode;
import org.objectweb.asm.tree.IntInsnNode;
import org.objectweb.asm.tree.InvokeDynamicInsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TypeInsnNode;
import org.objectweb.asm.tree.VarInsnNode;

/**
 * Generates the class file of one kernel: a final class implementing {@link KernelEntry} whose
 * {@code run} method holds the function body, plus one static method per outlined parallel body or
 * split-off part. It also collects the notes of code generation (loops generated differently from
 * their annotation, and why).
 */
final class BytecodeGen {
    /** The name the class file carries; the hidden class gets a unique suffix when defined. */
    static final String CLASS_NAME = "dev/kiln/jit/jvm/Kernel";
    /** HotSpot does not JIT-compile methods with more bytecode than this (-XX:-DontCompileHugeMethods aside). */
    static final int HUGE_METHOD = 8000;

    final PrimFunc func;
    final String className = CLASS_NAME;
    final int threads;
    final int vectorBits;
    final boolean vectorApi;
    /**
     * Whether float {@code a * b + c} in vectorized loops may become one FMA (a fast-math target,
     * {@code CpuTarget.fastMath()}), as the LLVM backend's {@code contract} flag.
     */
    final boolean contract;

    private final List<String> notes = new ArrayList<>();
    private final List<String> promotions = new ArrayList<>();
    private final List<MethodNode> methods = new ArrayList<>();
    private int counter;

    BytecodeGen(PrimFunc func, int threads, int vectorBits, boolean vectorApi, boolean contract) {
        this.func = func;
        this.contract = contract;
        this.threads = threads;
        this.vectorBits = vectorBits;
        this.vectorApi = vectorApi;
    }

    void note(String s) {
        notes.add(s);
    }

    List<String> notes() {
        return List.copyOf(notes);
    }

    void promoted(String s) {
        promotions.add(s);
    }

    List<String> promotions() {
        return List.copyOf(promotions);
    }

    String newMethodName(String prefix) {
        return prefix + "$" + counter++;
    }

    /** Adds a finished method; {@code ownsScratch}: it fetches its scratch context's segment itself. */
    void addMethod(MethodGen g, boolean ownsScratch) {
        InsnList pro = new InsnList();
        if (ownsScratch) {
            if (g.scratch.total > 0) {
                pro.add(new InsnNode(g.scratch.level == 0 ? ICONST_0 : ICONST_1));
                pro.add(new LdcInsnNode(g.scratch.total));
                pro.add(new MethodInsnNode(
                        INVOKESTATIC, "dev/kiln/jit/jvm/JvmScratch", "get", "(IJ)L" + ScalarGen.SEGMENT + ";", false));
            } else {
                pro.add(new InsnNode(ACONST_NULL));
            }
            pro.add(new VarInsnNode(ASTORE, g.scratchSlot));
        }
        g.node.instructions.insert(pro);
        methods.add(g.node);
    }

    byte[] generate() {
        ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_FRAMES) {
            @Override
            protected String getCommonSuperClass(String a, String b) {
                try {
                    return super.getCommonSuperClass(a, b);
                } catch (RuntimeException | LinkageError e) {
                    return "java/lang/Object";
                }
            }
        };
        cw.visit(V21, ACC_FINAL | ACC_SUPER | ACC_SYNTHETIC, className, null, "java/lang/Object", new String[] {
            "dev/kiln/jit/jvm/KernelEntry"
        });
        cw.visitSource("kiln:" + func.name(), null);
        MethodVisitor init = cw.visitMethod(0, "<init>", "()V", null, null);
        init.visitCode();
        init.visitVarInsn(ALOAD, 0);
        init.visitMethodInsn(INVOKESPECIAL, "java/lang/Object", "<init>", "()V", false);
        init.visitInsn(RETURN);
        init.visitMaxs(0, 0);
        init.visitEnd();

        MethodNode run = new MethodNode(ACC_PUBLIC, "run", "([L" + ScalarGen.SEGMENT + ";)V", null, null);
        MethodGen g = new MethodGen(this, run, 2, new MethodGen.ScratchContext(0), -1, false);
        List<Buffer> params = func.params();
        for (int i = 0; i < params.size(); i++) {
            int slot = g.newRefLocal();
            run.visitVarInsn(ALOAD, 1);
            g.iconst(i);
            run.visitInsn(AALOAD);
            run.visitVarInsn(ASTORE, slot);
            g.bufs.put(params.get(i).base(), new MethodGen.BufRef(slot, 0));
        }
        StmtEmitter.emit(g, func.body());
        run.visitInsn(RETURN);
        addMethod(g, true);

        checkSizes();
        for (MethodNode m : methods) m.accept(cw);
        cw.visitEnd();
        return cw.toByteArray();
    }

    /** Notes every method HotSpot would leave interpreted because of its size. */
    private void checkSizes() {
        for (MethodNode m : methods) {
            int size = 0;
            for (AbstractInsnNode i : m.instructions) size += bytes(i);
            if (size > HUGE_METHOD) {
                note("method " + m.name + " has about " + size + " bytes of bytecode, above HotSpot's " + HUGE_METHOD
                        + "-byte limit for JIT compilation: it runs interpreted, slowly");
            }
        }
    }

    /** The encoded size of an instruction (switches, which the generator does not emit, count 1). */
    private static int bytes(AbstractInsnNode i) {
        return switch (i) {
            case VarInsnNode v -> v.var < 4 ? 1 : v.var < 256 ? 2 : 4;
            case IntInsnNode n -> n.getOpcode() == SIPUSH ? 3 : 2;
            case LdcInsnNode l -> l.cst instanceof Long || l.cst instanceof Double ? 3 : 3;
            case JumpInsnNode j -> 3;
            case MethodInsnNode m -> m.getOpcode() == INVOKEINTERFACE ? 5 : 3;
            case InvokeDynamicInsnNode d -> 5;
            case FieldInsnNode f -> 3;
            case TypeInsnNode t -> 3;
            case IincInsnNode n -> 3;
            case InsnNode n -> 1;
            default -> 0; // labels, frames, line numbers
        };
    }
}
