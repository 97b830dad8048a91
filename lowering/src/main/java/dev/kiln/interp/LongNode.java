package dev.kiln.interp;

/**
 * A compiled expression of integer or bool type. {@link #eval} returns the value already reduced
 * to the expression's type (int8 in [-128, 127], uint8 in [0, 255], bool 0 or 1).
 */
abstract class LongNode {
    abstract long eval(Frame f);
}
