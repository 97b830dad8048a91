package dev.kiln.cyclefixture.a;

import dev.kiln.cyclefixture.b.B;

/** Half of a deliberate package cycle: shows that {@code PackageCyclesTest}'s rule can fail. */
public final class A {
    B partner;
}
