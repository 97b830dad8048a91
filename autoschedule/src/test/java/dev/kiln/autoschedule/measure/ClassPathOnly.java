package dev.kiln.autoschedule.measure;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * A test class that runs on the class path, in autoschedule/pom.xml's second surefire execution
 * ({@code class-path-tests}), while the other tests run on the module path: it needs {@link FaultyBackend}, which
 * {@code ServiceLoader} finds only through src/test/resources/META-INF/services, and a provider file is ignored for
 * a class inside a named module (the patched {@code dev.kiln.autoschedule} keeps the main descriptor, which does not
 * {@code provides} a test class).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag("class-path")
public @interface ClassPathOnly {}
