package dev.kiln.schedule;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * No package of this module depends on itself through other packages (issue 14: {@code schedule} and
 * {@code lower} were a cycle through {@code Schedule.lower()}; lowering a schedule is now {@code
 * Lowering.lower(name, schedule)}). Each package is one slice; the rule's own check against a
 * deliberate cycle is dsl's {@code dev.kiln.te.PackageCyclesTest}.
 */
class PackageCyclesTest {
    @Test
    void theModulesPackagesFormNoCycle() throws Exception {
        Path classes = Path.of(Schedule.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        slices().matching("dev.kiln.(**)").should().beFreeOfCycles().check(new ClassFileImporter().importPath(classes));
    }
}
