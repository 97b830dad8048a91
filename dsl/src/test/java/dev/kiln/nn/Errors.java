package dev.kiln.nn;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.ir.KilnException;
import org.junit.jupiter.api.function.Executable;

/** Asserts that building an operator throws a KilnException whose message names what is at fault. */
final class Errors {
    private Errors() {}

    static KilnException assertMessage(Executable build, String... fragments) {
        KilnException e = assertThrows(KilnException.class, build);
        for (String f : fragments) {
            assertTrue(e.getMessage().contains(f), () -> "message lacks '" + f + "': " + e.getMessage());
        }
        return e;
    }
}
