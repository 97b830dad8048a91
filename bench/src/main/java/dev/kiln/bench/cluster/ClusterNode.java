package dev.kiln.bench.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.kiln.ir.KilnException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.AddressFromURIString;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.JoinSeedNodes;

/**
 * One member of a Kiln measurement cluster (a tuner or a worker): a Pekko actor system with cluster membership over
 * mutually authenticated TLS ({@link ClusterSettings}). A node joins through its seeds; with none it starts a new
 * cluster. Close it to leave the cluster.
 */
public final class ClusterNode implements AutoCloseable {
    private final ActorSystem<Void> system;
    /** Set once the cluster has removed this node (a node that has not joined yet also reads as Removed). */
    private volatile boolean removed;

    private ClusterNode(ActorSystem<Void> system) {
        this.system = system;
        org.apache.pekko.cluster.Cluster.get(Adapter.toClassic(system)).registerOnMemberRemoved(() -> removed = true);
    }

    /** Starts a node with {@code roles} ("tuner", "worker") and joins the cluster. */
    public static ClusterNode start(ClusterSettings settings, List<String> roles) {
        return start(settings, roles, ConfigFactory.empty());
    }

    /** Starts a node whose Pekko configuration is {@code overrides} over the one {@code settings} gives. */
    static ClusterNode start(ClusterSettings settings, List<String> roles, Config overrides) {
        ActorSystem<Void> system;
        try {
            system = ActorSystem.create(
                    Behaviors.empty(), ClusterSettings.SYSTEM_NAME, overrides.withFallback(settings.config(roles)));
        } catch (RuntimeException e) {
            throw new KilnException("cannot start a cluster node on " + settings.host() + ":" + settings.port() + ": "
                    + e.getMessage());
        }
        Cluster cluster = Cluster.get(system);
        var self = cluster.selfMember().address();
        List<String> seeds =
                settings.seedAddresses(self.host().get(), (Integer) self.port().get());
        cluster.manager()
                .tell(new JoinSeedNodes(
                        seeds.stream().map(AddressFromURIString::parse).toList()));
        return new ClusterNode(system);
    }

    /** This node's {@code host:port}. */
    public String address() {
        var a = Cluster.get(system).selfMember().address();
        return a.host().get() + ":" + a.port().get();
    }

    /** Whether this node is an up member of the cluster. */
    public boolean isUp() {
        MemberStatus s = Cluster.get(system).selfMember().status();
        return s == MemberStatus.up() || s == MemberStatus.weaklyUp();
    }

    /** Whether the cluster has marked this node Down, Exiting or Removed: it will not be up again. */
    public boolean isGone() {
        MemberStatus s = Cluster.get(system).selfMember().status();
        return s == MemberStatus.down() || s == MemberStatus.exiting() || removed;
    }

    /** Waits up to {@code timeout} for this node to be up; returns whether it is. */
    public boolean awaitUp(Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        while (!isUp() && System.nanoTime() < end) sleep(50);
        return isUp();
    }

    /** How many members the cluster has as this node sees it (up or joining). */
    public int members() {
        int n = 0;
        for (var ignored : Cluster.get(system).state().getMembers()) n++;
        return n;
    }

    <T> ActorRef<T> spawn(Behavior<T> behavior, String name) {
        try {
            return system.systemActorOf(behavior, name, Props.empty());
        } catch (RuntimeException e) {
            throw new KilnException("cannot start actor " + name + ": " + e.getMessage());
        }
    }

    ActorSystem<Void> system() {
        return system;
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KilnException("interrupted");
        }
    }

    /** Leaves the cluster and stops the node (waits up to 10 s). */
    @Override
    public void close() {
        Cluster cluster = Cluster.get(system);
        cluster.manager()
                .tell(org.apache.pekko.cluster.typed.Leave.create(
                        cluster.selfMember().address()));
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (System.nanoTime() < end && cluster.selfMember().status() != MemberStatus.removed() && isUp()) sleep(50);
        system.terminate();
        try {
            system.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            // the JVM ends it anyway
        }
    }
}
