package dev.kiln.interp;

/** A compiled statement. */
abstract class ExecNode {
    abstract void run(Frame f);
}
