package dev.kiln.schedule;

/** What a loop iterates over; the integer codes are Ansor's and part of the log format. */
public enum IterKind {
    SPATIAL(0),
    REDUCE(1),
    /** A fusion of spatial and reduction loops. */
    MIXED(2),
    SPECIAL(3);

    private final int code;

    IterKind(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
