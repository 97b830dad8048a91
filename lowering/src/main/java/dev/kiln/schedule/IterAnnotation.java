package dev.kiln.schedule;

import dev.kiln.ir.KilnException;
import dev.kiln.tir.ThreadAxis;

/** How a loop is annotated; the integer codes are Ansor's and part of the log format. */
public enum IterAnnotation {
    NONE(0, "for", null),
    UNROLL(1, "unroll", null),
    VECTORIZE(2, "vectorize", null),
    PARALLEL(3, "parallel", null),
    VTHREAD(4, "vthread", ThreadAxis.VTHREAD),
    BLOCK_X(5, "blockIdx.x", ThreadAxis.BLOCK_X),
    THREAD_X(6, "threadIdx.x", ThreadAxis.THREAD_X),
    BLOCK_Y(7, "blockIdx.y", ThreadAxis.BLOCK_Y),
    THREAD_Y(8, "threadIdx.y", ThreadAxis.THREAD_Y),
    BLOCK_Z(9, "blockIdx.z", ThreadAxis.BLOCK_Z),
    THREAD_Z(10, "threadIdx.z", ThreadAxis.THREAD_Z);

    private final int code;
    private final String displayName;
    private final ThreadAxis thread;

    IterAnnotation(int code, String displayName, ThreadAxis thread) {
        this.code = code;
        this.displayName = displayName;
        this.thread = thread;
    }

    public int code() {
        return code;
    }

    /** "parallel", "vectorize", "threadIdx.x", ... */
    public String displayName() {
        return displayName;
    }

    /** The GPU thread axis this annotation binds to, or null. */
    public ThreadAxis thread() {
        return thread;
    }

    public boolean isThreadBinding() {
        return thread != null;
    }

    public static IterAnnotation fromCode(int code) {
        for (IterAnnotation a : values()) if (a.code == code) return a;
        throw new KilnException("unknown iterator annotation code " + code);
    }

    public static IterAnnotation parse(String name) {
        for (IterAnnotation a : values()) if (a.displayName.equals(name)) return a;
        throw new KilnException("unknown iterator annotation '" + name + "'");
    }
}
