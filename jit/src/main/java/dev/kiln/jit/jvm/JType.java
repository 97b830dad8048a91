package dev.kiln.jit.jvm;

import dev.kiln.ir.DType;
import org.objectweb.asm.Opcodes;

/**
 * How a value of a Kiln {@link DType} lives on the JVM operand stack and in locals: int8, int16,
 * int32, uint8 and bool as {@code int} (bool is 0 or 1, uint8 is 0..255), int64 as {@code long},
 * float32 as {@code float}, and float64, float16 and bfloat16 as {@code double} (float16 and
 * bfloat16 values are rounded to their type after every operation, as the interpreter does).
 */
enum JType {
    INT("I", Opcodes.ILOAD, Opcodes.ISTORE, 1),
    LONG("J", Opcodes.LLOAD, Opcodes.LSTORE, 2),
    FLOAT("F", Opcodes.FLOAD, Opcodes.FSTORE, 1),
    DOUBLE("D", Opcodes.DLOAD, Opcodes.DSTORE, 2);

    final String desc;
    final int load;
    final int store;
    final int size;

    JType(String desc, int load, int store, int size) {
        this.desc = desc;
        this.load = load;
        this.store = store;
        this.size = size;
    }

    static JType of(DType t) {
        return switch (t) {
            case INT8, INT16, INT32, UINT8, BOOL -> INT;
            case INT64 -> LONG;
            case FLOAT32 -> FLOAT;
            case FLOAT64, FLOAT16, BFLOAT16 -> DOUBLE;
        };
    }

    /** The opcode that pops a value of this type. */
    int pop() {
        return size == 2 ? Opcodes.POP2 : Opcodes.POP;
    }
}
