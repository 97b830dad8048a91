package dev.kiln.cyclefixture.b;

import dev.kiln.cyclefixture.a.A;

/** The other half of the deliberate package cycle of {@code dev.kiln.cyclefixture}. */
public final class B {
    A partner;
}
