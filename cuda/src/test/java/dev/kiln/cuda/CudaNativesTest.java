package dev.kiln.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import org.junit.jupiter.api.Test;

/**
 * JCuda's own native libraries (not the CUDA driver, which this machine may lack) are where JCuda's {@code LibUtils}
 * looks for them: resources beside its classes. On the module path {@code jcuda} and {@code jcublas} are automatic
 * modules whose natives jars are separate, and a named module's {@code Class.getResourceAsStream} looks only inside
 * that module; cuda/pom.xml therefore patches each natives jar into its module ({@code kiln.test.args}). Without that,
 * JCuda would fail to load and {@link CudaDriver} would report no driver on a machine that has one, and every GPU test
 * would skip.
 */
class CudaNativesTest {

    @Test
    void jcudasNativeLibrariesAreFoundBesideItsClasses() {
        assumeTrue(
                "Linux".equals(System.getProperty("os.name")) && "amd64".equals(System.getProperty("os.arch")),
                "the build's JCuda natives are linux-x86_64's");
        String v = System.getProperty("kiln.jcuda.version");
        assumeTrue(v != null, "kiln.jcuda.version is set by cuda/pom.xml's surefire configuration");
        String driver = "/lib/libJCudaDriver-" + v + "-linux-x86_64.so";
        String cublas = "/lib/libJCublas2-" + v + "-linux-x86_64.so";
        assertThat(JCudaDriver.class.getResource(driver))
                .as("%s in %s", driver, JCudaDriver.class.getModule())
                .isNotNull();
        assertThat(JCublas2.class.getResource(cublas))
                .as("%s in %s", cublas, JCublas2.class.getModule())
                .isNotNull();
    }
}
