package dev.kiln.bench.cluster;

import dev.kiln.ir.KilnException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Makes a cluster's key store with the JDK's {@code keytool}: one RSA key pair and its self-signed certificate in a
 * PKCS#12 file, which every node of the cluster uses as key store and trust store (so each node proves it holds the
 * cluster key, and trusts only nodes that hold it). Written readable by the owner only.
 */
public final class ClusterKeys {
    private ClusterKeys() {}

    /** Writes {@code file} (which must not exist) protected by {@code password}; returns {@code file}. */
    public static Path generate(Path file, String password, String name) {
        if (Files.exists(file)) throw new KilnException("key store " + file + " exists already; not overwriting it");
        if (password.length() < 6) throw new KilnException("the key store password needs at least 6 characters");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        List<String> cmd = List.of(
                keytool.toString(),
                "-genkeypair",
                "-alias",
                "kiln-cluster",
                "-keyalg",
                "RSA",
                "-keysize",
                "3072",
                "-validity",
                "3650",
                "-dname",
                "CN=" + name,
                "-storetype",
                "PKCS12",
                "-keystore",
                file.toString(),
                "-storepass:env",
                "KILN_KS_PASS",
                "-keypass:env",
                "KILN_KS_PASS");
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().put("KILN_KS_PASS", password);
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new KilnException("keytool did not finish within 120 s");
            }
            if (p.exitValue() != 0) throw new KilnException("keytool failed (" + p.exitValue() + "): " + out.strip());
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            return file;
        } catch (IOException e) {
            throw new KilnException("cannot run " + keytool + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KilnException("interrupted while making the key store");
        }
    }
}
