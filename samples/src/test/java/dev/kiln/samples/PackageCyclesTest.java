package dev.kiln.samples;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * No package of this module depends on itself through other packages. Each package is one slice; the
 * rule's own check against a deliberate cycle is dsl's {@code dev.kiln.te.PackageCyclesTest}.
 */
class PackageCyclesTest {
    @Test
    void theModulesPackagesFormNoCycle() throws Exception {
        Path classes = Path.of(MainJob.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        slices().matching("dev.kiln.(**)").should().beFreeOfCycles().check(new ClassFileImporter().importPath(classes));
    }
}
