package dev.kiln.ir;

/** Where a buffer lives. Shared and local matter for GPU programs; CPUs use global and local. */
public enum MemoryScope {
    GLOBAL,
    SHARED,
    LOCAL;

    public String displayName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
