package dev.kiln.ir;

/**
 * The exception Kiln throws for bad input: a type mismatch, a rank mismatch, a bad extent, a step
 * that cannot apply. Its message names the tensor, axis, expression or step at fault.
 */
public class KilnException extends RuntimeException {
    public KilnException(String message) {
        super(message);
    }

    public KilnException(String message, Throwable cause) {
        super(message, cause);
    }
}
