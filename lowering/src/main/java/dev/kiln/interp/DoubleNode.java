package dev.kiln.interp;

/** A compiled expression of floating type; {@link #eval} returns the value rounded to that type. */
abstract class DoubleNode {
    abstract double eval(Frame f);
}
