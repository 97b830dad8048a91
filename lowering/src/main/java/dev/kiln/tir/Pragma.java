package dev.kiln.tir;

import dev.kiln.ir.KilnException;
import java.util.Objects;

/**
 * A hint attached to the statement it wraps, usually a loop: {@code auto_unroll_max_step = 64}
 * asks the unroll pass to unroll every loop nest inside whose total trip count is at most 64.
 * Backends that do not know a key ignore it; the interpreter runs the body.
 */
public record Pragma(String key, long value, Stmt body) implements Stmt {
    /** The pragma of Ansor's auto-unroll annotation. */
    public static final String AUTO_UNROLL_MAX_STEP = "auto_unroll_max_step";

    /**
     * The key prefix of a tensorized loop nest, {@code tensorize$<intrinsic>}: a backend that
     * implements the intrinsic replaces the nest by it (a backend that does not must refuse the
     * program rather than run the loops silently, except the reference paths, which run the
     * loops: the pattern). Passes leave the nest inside as it is.
     */
    public static final String TENSORIZE_PREFIX = "tensorize$";

    /** The intrinsic of a tensorize pragma, or null for another pragma. */
    public String tensorIntrinsic() {
        return key.startsWith(TENSORIZE_PREFIX) ? key.substring(TENSORIZE_PREFIX.length()) : null;
    }

    public Pragma {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(body, "body");
        if (key.isEmpty()) throw new KilnException("a pragma needs a key");
    }

    @Override
    public String toString() {
        return StmtPrinter.print(this);
    }
}
