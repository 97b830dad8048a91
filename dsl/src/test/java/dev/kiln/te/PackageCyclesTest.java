package dev.kiln.te;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import dev.kiln.cyclefixture.a.A;
import java.net.URISyntaxException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * No package of this module depends on itself through other packages (issue 14: {@code ir} and
 * {@code te} were a cycle through {@code TensorRead}). Every module has this test over its own
 * classes; each package is one slice.
 */
class PackageCyclesTest {
    static final ArchRule NO_CYCLES =
            slices().matching("dev.kiln.(**)").should().beFreeOfCycles();

    @Test
    void theModulesPackagesFormNoCycle() {
        NO_CYCLES.check(classesBeside(Tensor.class));
    }

    @Test
    void theRuleCatchesACycle() {
        assertThatThrownBy(() -> NO_CYCLES.check(classesBeside(A.class)
                        .that(com.tngtech.archunit.base.DescribedPredicate.describe(
                                "in the fixture", c -> c.getPackageName().startsWith("dev.kiln.cyclefixture")))))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("cyclefixture.a")
                .hasMessageContaining("cyclefixture.b");
    }

    /** Every class in the folder or jar that {@code anchor} was loaded from. */
    static JavaClasses classesBeside(Class<?> anchor) {
        try {
            return new ClassFileImporter()
                    .importPath(Path.of(anchor.getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI()));
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
