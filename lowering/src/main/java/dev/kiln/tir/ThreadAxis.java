package dev.kiln.tir;

/** The GPU thread axes a loop can be bound to. */
public enum ThreadAxis {
    BLOCK_X("blockIdx.x"),
    BLOCK_Y("blockIdx.y"),
    BLOCK_Z("blockIdx.z"),
    THREAD_X("threadIdx.x"),
    THREAD_Y("threadIdx.y"),
    THREAD_Z("threadIdx.z"),
    VTHREAD("vthread");

    private final String tag;

    ThreadAxis(String tag) {
        this.tag = tag;
    }

    /** The CUDA name, as in TVM's bind: "blockIdx.x". */
    public String tag() {
        return tag;
    }

    public static ThreadAxis parse(String tag) {
        for (ThreadAxis t : values()) if (t.tag.equals(tag)) return t;
        throw new dev.kiln.ir.KilnException("unknown thread axis '" + tag + "'");
    }
}
