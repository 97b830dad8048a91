package dev.kiln.jit.jvm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Scratch memory for the buffers a kernel allocates, one growing native segment per thread and
 * level, reused across calls. Level 0 serves a kernel's own method, level 1 the bodies of its
 * parallel loops (which may run on the calling thread while level 0 is in use). Each allocation of
 * a kernel has a fixed offset inside its level's segment, computed at compile time.
 */
final class JvmScratch {
    private JvmScratch() {}

    /** Alignment of every scratch segment and of every allocation's offset in it. */
    static final long ALIGN = 64;

    private static final ThreadLocal<MemorySegment[]> SEGMENTS = ThreadLocal.withInitial(() -> new MemorySegment[2]);

    /** A segment of at least {@code bytes} bytes for this thread and {@code level}. */
    static MemorySegment get(int level, long bytes) {
        MemorySegment[] s = SEGMENTS.get();
        MemorySegment m = s[level];
        if (m == null || m.byteSize() < bytes) {
            m = Arena.ofAuto().allocate(Math.max(bytes, 4096), ALIGN);
            s[level] = m;
        }
        return m;
    }
}
