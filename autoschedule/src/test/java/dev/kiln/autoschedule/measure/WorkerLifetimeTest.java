package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * No measuring child outlives its tuner: one that exits without closing its measurer (the
 * shutdown hook stops the child and deletes the files), and one killed outright while its child
 * runs a program that never ends (the child, deaf to its closed input, sees its parent go and
 * stops itself).
 */
@ClassPathOnly
class WorkerLifetimeTest {

    private record Tuner(Process process, long child, Path dir) {}

    private static Tuner launch(String mode) throws Exception {
        List<String> cmd = List.of(
                WorkerCommand.javaBinary(),
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                LeaveOpenMain.class.getName(),
                mode);
        Process p = new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = r.readLine()) != null && !line.startsWith("CHILD ")) {
            // skip other output
        }
        assertThat(line).as("the tuner reports its child").isNotNull();
        String[] w = line.split(" ", 4);
        return new Tuner(p, Long.parseLong(w[1]), Path.of(w[3]));
    }

    private static void assertGone(long pid) throws Exception {
        var h = ProcessHandle.of(pid);
        if (h.isPresent()) h.get().onExit().get(20, TimeUnit.SECONDS);
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                .as("child " + pid + " alive")
                .isFalse();
    }

    @Test
    void aTunerThatExitsWithoutClosingLeavesNothingBehind() throws Exception {
        Tuner t = launch("exit");
        assertThat(t.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertGone(t.child());
        assertThat(Files.exists(t.dir())).as("temporary directory " + t.dir()).isFalse();
    }

    @Test
    void theBusyChildOfAKilledTunerStopsByItself() throws Exception {
        Tuner t = launch("hang");
        Thread.sleep(500);
        t.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        assertGone(t.child());
        Fixtures.deleteTree(t.dir());
    }
}
