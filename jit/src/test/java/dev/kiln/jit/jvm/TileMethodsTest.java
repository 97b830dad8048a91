package dev.kiln.jit.jvm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.target.JvmRegisterTiles;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ConstantDynamic;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TypeInsnNode;
import org.objectweb.asm.tree.VarInsnNode;

/**
 * What the generator promises C2 for a register-tiled GEMM ({@link TileMethods}, {@link ExactVectors}): the tile's
 * arithmetic in one small method that holds the reduction loops and no loop around them (so it is invoked once per
 * tile and compiled as a normal method, not only through OSR), and every vector read back from a local cast to its
 * exact class (so no Vector API call depends on a type profile). Numbers are checked against the interpreter.
 */
class TileMethodsTest {
    private static final String FLOAT_VECTOR = "jdk/incubator/vector/FloatVector";

    /** The methods of the kernel class that do a tile's vector arithmetic (add, mul or fma on FloatVector). */
    private static List<MethodNode> arithmeticMethods(JvmKernel k) {
        ClassNode cn = new ClassNode();
        new ClassReader(k.classFile()).accept(cn, 0);
        List<MethodNode> out = new ArrayList<>();
        for (MethodNode m : cn.methods) {
            for (AbstractInsnNode i : m.instructions) {
                if (i instanceof MethodInsnNode c
                        && c.owner.equals(FLOAT_VECTOR)
                        && (c.name.equals("add") || c.name.equals("mul") || c.name.equals("fma"))) {
                    out.add(m);
                    break;
                }
            }
        }
        return out;
    }

    private static int backwardJumps(MethodNode m) {
        int n = 0;
        for (AbstractInsnNode i : m.instructions) {
            if (i instanceof JumpInsnNode j && m.instructions.indexOf(j.label) < m.instructions.indexOf(j)) n++;
        }
        return n;
    }

    private static boolean jumpsBackAfterLastStore(MethodNode m) {
        int last = -1;
        for (AbstractInsnNode i : m.instructions) {
            if (i instanceof MethodInsnNode c && c.name.equals("intoMemorySegment")) last = m.instructions.indexOf(i);
        }
        for (AbstractInsnNode i : m.instructions) {
            if (i instanceof JumpInsnNode j
                    && m.instructions.indexOf(j) > last
                    && m.instructions.indexOf(j.label) < m.instructions.indexOf(j)) {
                return true;
            }
        }
        return false;
    }

    private static int codeBytes(MethodNode m) {
        org.objectweb.asm.ClassWriter w = new org.objectweb.asm.ClassWriter(0);
        w.visit(Opcodes.V21, Opcodes.ACC_PUBLIC, "M", null, "java/lang/Object", null);
        MethodNode copy = new MethodNode(m.access, "m", m.desc, null, null);
        m.accept(copy);
        org.objectweb.asm.MethodVisitor mv = w.visitMethod(m.access, "m", m.desc, null, null);
        copy.accept(mv);
        w.visitEnd();
        // the method's share of the class file: an upper bound of its bytecode size
        return w.toByteArray().length;
    }

    /** Locals that receive a FloatVector (stored right after a call or cast that yields one). */
    private static Set<Integer> vectorSlots(MethodNode m) {
        Set<Integer> slots = new HashSet<>();
        for (AbstractInsnNode i : m.instructions) {
            if (!(i instanceof VarInsnNode v) || v.getOpcode() != Opcodes.ASTORE) continue;
            AbstractInsnNode p = v.getPrevious();
            if (p != null && p.getOpcode() == Opcodes.DUP) p = p.getPrevious();
            boolean vector = p instanceof MethodInsnNode c && c.desc.endsWith(")L" + FLOAT_VECTOR + ";")
                    || p instanceof TypeInsnNode t && t.getOpcode() == Opcodes.CHECKCAST && t.desc.equals(FLOAT_VECTOR);
            if (vector) slots.add(v.var);
        }
        return slots;
    }

    @Test
    void theTileIsAMethodOfItsOwnAndItsVectorLocalsAreCastToTheirExactClass() {
        PrimFunc f = RegisterTilesTest.tunedLikeGemm(8 * Math.max(2, Math.min(16, JvmCheck.TARGET.vectorBits() / 32)));
        JvmBackend.clearCache();
        JvmKernel k = JvmCheck.exact(f, 5);
        assertThat(k.promotions()).anyMatch(p -> p.endsWith("keeps 8 vector(s) of 'C.local' in locals"));
        List<MethodNode> tile = arithmeticMethods(k);
        assertThat(tile).as("methods with the tile's arithmetic").hasSize(1);
        MethodNode m = tile.get(0);
        assertThat(m.name).startsWith("part$");
        // the split reduction k.0 / k.1 only; after the tile's stores no loop jumps back (none encloses the tile)
        assertThat(backwardJumps(m)).as("loops in the tile's method").isEqualTo(2);
        assertThat(jumpsBackAfterLastStore(m))
                .as("a loop around the tile's stores")
                .isFalse();
        assertThat(codeBytes(m)).as("size of the tile's method").isLessThan(4000);
        Set<Integer> slots = vectorSlots(m);
        assertThat(slots).as("vector locals of the tile's method").hasSizeGreaterThanOrEqualTo(8);
        int reads = 0;
        for (AbstractInsnNode i : m.instructions) {
            if (i instanceof VarInsnNode v && v.getOpcode() == Opcodes.ALOAD && slots.contains(v.var)) {
                reads++;
                assertThat(v.getNext())
                        .as("the read of vector local " + v.var + " is followed by its exact class")
                        .isInstanceOfSatisfying(
                                LdcInsnNode.class, l -> assertThat(l.cst).isInstanceOf(ConstantDynamic.class));
            }
        }
        assertThat(reads).isGreaterThanOrEqualTo(16); // 8 accumulators, read in the loop and stored after it
    }

    @Test
    void withoutTileMethodsTheArithmeticSitsInsideTheLoopNest() {
        PrimFunc f = RegisterTilesTest.tunedLikeGemm(8 * Math.max(2, Math.min(16, JvmCheck.TARGET.vectorBits() / 32)));
        System.setProperty("kiln.jvm.tileMethods", "false");
        System.setProperty("kiln.jvm.exactVectors", "false");
        try {
            JvmBackend.clearCache();
            JvmKernel k = JvmCheck.exact(f, 6);
            List<MethodNode> tile = arithmeticMethods(k);
            assertThat(tile).hasSize(1);
            assertThat(tile.get(0).instructions.toArray())
                    .noneMatch(i -> i instanceof LdcInsnNode l && l.cst instanceof ConstantDynamic);
        } finally {
            System.clearProperty("kiln.jvm.tileMethods");
            System.clearProperty("kiln.jvm.exactVectors");
            JvmBackend.clearCache();
        }
    }

    @Test
    void theGeneratorsTileLimitsAreTheSharedOnes() {
        assertThat(RegisterTiles.MAX_ROWS).isEqualTo(JvmRegisterTiles.MAX_ROWS).isEqualTo(16);
        for (int bits : new int[] {128, 256, 512}) {
            assertThat(Promotion.maxVectors(bits)).isEqualTo(JvmRegisterTiles.maxVectors(bits));
        }
        assertThat(JvmRegisterTiles.maxVectors(512)).isEqualTo(24);
    }
}
