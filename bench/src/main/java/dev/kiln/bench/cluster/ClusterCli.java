package dev.kiln.bench.cluster;

import dev.kiln.ir.KilnException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The cluster's command line: {@code worker}, {@code keys}, {@code bench} (what {@code ./kiln} runs). */
@Command(
        name = "kiln-cluster",
        mixinStandardHelpOptions = true,
        subcommands = {WorkerCommand.class, ClusterCli.Keys.class, ScaleBench.class},
        description = "Measurement on a cluster of workers (Apache Pekko Cluster over mutually authenticated TLS).")
public final class ClusterCli implements Callable<Integer> {

    public static void main(String[] args) {
        CommandLine cl = new CommandLine(new ClusterCli());
        cl.setExecutionExceptionHandler((e, line, parsed) -> {
            if (e instanceof KilnException) {
                System.err.println("kiln: " + e.getMessage());
                return 2;
            }
            throw e;
        });
        System.exit(cl.execute(args));
    }

    @Override
    public Integer call() {
        CommandLine.usage(this, System.out);
        return 0;
    }

    /** {@code ./kiln cluster-keys DIR}: makes the cluster's key store. */
    @Command(
            name = "keys",
            mixinStandardHelpOptions = true,
            description = "Make a cluster key store "
                    + "(DIR/kiln-cluster.p12); copy it to every node, with its password, over a channel you trust.")
    static final class Keys implements Callable<Integer> {
        @Parameters(index = "0", description = "the directory to write kiln-cluster.p12 to")
        Path dir;

        @Option(
                names = "--password-file",
                description =
                        "a file holding the password (default: the environment " + "variable KILN_CLUSTER_PASSWORD)")
        Path passwordFile;

        @Override
        public Integer call() throws Exception {
            java.nio.file.Files.createDirectories(dir);
            Path f = ClusterKeys.generate(
                    dir.resolve("kiln-cluster.p12"), WorkerCommand.password(passwordFile), "kiln-cluster");
            System.out.println("wrote " + f);
            return 0;
        }
    }
}
