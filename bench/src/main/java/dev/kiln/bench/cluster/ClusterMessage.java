package dev.kiln.bench.cluster;

/**
 * A message that crosses the network between a tuner's {@link JobActor} and a {@link WorkerActor}: Pekko serializes
 * every class that implements it with {@link MessageSerializer} (JSON through Jackson; actor references through
 * Pekko's {@code ActorRefResolver}). Messages that stay inside one JVM do not implement it.
 */
public interface ClusterMessage {}
