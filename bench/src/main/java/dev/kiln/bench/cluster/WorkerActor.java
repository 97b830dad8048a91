package dev.kiln.bench.cluster;

import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.RemoteMeasurement;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.receptionist.Receptionist;

/**
 * A measurement worker: it registers under its target's key, learns the jobs of that target from the receptionist,
 * and when idle asks them for a program in turn (round robin over the jobs that have work, so two tuning jobs share
 * the worker evenly). It measures one program at a time, in its own child JVM ({@link
 * RemoteMeasurement.Executor}: a program that crashes or hangs costs that program, not the worker), on a thread of its
 * own, and sends the result back to the job. Workloads are fetched from the job in pieces the first time a program of
 * that workload comes and kept in files (the last {@value #WORKLOADS_KEPT}).
 */
final class WorkerActor extends AbstractBehavior<WorkerActor.Command> {
    /** What a worker receives: {@link Wire.WorkAvailable} and the local messages below. */
    interface Command {}

    private record JobsListed(Set<ActorRef<JobActor.Command>> jobs) implements Command {}

    private record Replied(ActorRef<JobActor.Command> job, Wire.WorkReply reply, String failure) implements Command {}

    private record Chunk(Wire.Work work, ByteArrayOutputStream sofar, Wire.WorkloadChunk chunk, String failure)
            implements Command {}

    private record Measured(Wire.Work work, MeasureResult result) implements Command {}

    private enum Tick implements Command {
        INSTANCE
    }

    static final int WORKLOADS_KEPT = 8;
    private static final Duration ASK_TIMEOUT = Duration.ofSeconds(30);

    /** How a worker measures, besides its target. */
    record Options(boolean simulate, boolean corruptReferences, List<String> childJvmFlags) {}

    private final String target;
    private final Options options;
    private final List<ActorRef<JobActor.Command>> jobs = new ArrayList<>();
    private final Set<ActorRef<JobActor.Command>> withWork = new HashSet<>();
    private final Map<String, Path> workloadFiles = new LinkedHashMap<>(16, 0.75f, true);
    private final ExecutorService measuring;
    private final Path dir;
    private RemoteMeasurement.Executor executor;
    private ActorRef<JobActor.Command> lastServed;
    private boolean busy;
    private long measuredCount;

    static Behavior<Command> create(String target, Options options) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            timers.startTimerWithFixedDelay(Tick.INSTANCE, Duration.ofSeconds(2));
            return new WorkerActor(ctx, target, options);
        }));
    }

    private WorkerActor(ActorContext<Command> ctx, String target, Options options) throws IOException {
        super(ctx);
        this.target = target;
        this.options = options;
        this.dir = Files.createTempDirectory("kiln-cluster-worker-");
        this.measuring = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "kiln-worker-measure");
            t.setDaemon(true);
            return t;
        });
        ActorRef<Receptionist.Listing> listings = ctx.messageAdapter(
                Receptionist.Listing.class, l -> new JobsListed(l.getServiceInstances(JobActor.jobKey(target))));
        ctx.getSystem().receptionist().tell(Receptionist.subscribe(JobActor.jobKey(target), listings));
        ctx.getSystem().receptionist().tell(Receptionist.register(JobActor.workerKey(target), ctx.getSelf()));
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(JobsListed.class, this::onJobs)
                .onMessage(Wire.WorkAvailable.class, m -> {
                    if (!jobs.contains(m.job())) jobs.add(m.job());
                    withWork.add(m.job());
                    return next();
                })
                .onMessage(Replied.class, this::onReplied)
                .onMessage(Chunk.class, this::onChunk)
                .onMessage(Measured.class, this::onMeasured)
                .onMessage(Tick.class, m -> {
                    // a job that had nothing may have work again without its notice reaching us: ask them all
                    if (!busy) withWork.addAll(jobs);
                    return next();
                })
                .onSignal(PostStop.class, s -> {
                    measuring.shutdownNow();
                    if (executor != null) executor.close();
                    return this;
                })
                .build();
    }

    private Behavior<Command> onJobs(JobsListed l) {
        jobs.removeIf(j -> !l.jobs().contains(j));
        withWork.retainAll(l.jobs());
        for (ActorRef<JobActor.Command> j : l.jobs()) {
            if (!jobs.contains(j)) {
                jobs.add(j);
                withWork.add(j);
            }
        }
        return next();
    }

    /** When idle, asks the next job with work after the one served last. */
    private Behavior<Command> next() {
        if (busy || withWork.isEmpty() || jobs.isEmpty()) return this;
        int start = lastServed == null ? 0 : jobs.indexOf(lastServed) + 1;
        ActorRef<JobActor.Command> job = null;
        for (int k = 0; k < jobs.size(); k++) {
            ActorRef<JobActor.Command> j = jobs.get(Math.floorMod(start + k, jobs.size()));
            if (withWork.contains(j)) {
                job = j;
                break;
            }
        }
        if (job == null) return this;
        busy = true;
        ActorRef<JobActor.Command> asked = job;
        ActorRef<Command> self = getContext().getSelf();
        getContext()
                .ask(
                        Wire.WorkReply.class,
                        job,
                        ASK_TIMEOUT,
                        replyTo -> new Wire.RequestWork(JobActor.id(self), target, self, replyTo),
                        (reply, failure) -> new Replied(asked, reply, failure == null ? null : failure.toString()));
        return this;
    }

    private Behavior<Command> onReplied(Replied r) {
        if (r.failure() != null || !(r.reply() instanceof Wire.Work w)) {
            withWork.remove(r.job());
            busy = false;
            return next();
        }
        lastServed = r.job();
        if (w.program().isEmpty() || workloadFiles.containsKey(w.workloadKey())) {
            startMeasuring(w);
        } else {
            fetch(w, new ByteArrayOutputStream(Math.max(0, w.workloadBytes())), 0);
        }
        return this;
    }

    private void fetch(Wire.Work w, ByteArrayOutputStream sofar, int offset) {
        getContext()
                .ask(
                        Wire.WorkloadChunk.class,
                        w.job(),
                        ASK_TIMEOUT,
                        replyTo -> new Wire.FetchWorkload(w.workloadKey(), offset, replyTo),
                        (chunk, failure) -> new Chunk(w, sofar, chunk, failure == null ? null : failure.toString()));
    }

    private Behavior<Command> onChunk(Chunk c) {
        Wire.Work w = c.work();
        String error = c.failure() != null
                ? c.failure()
                : c.chunk().error().isEmpty() ? null : c.chunk().error();
        if (error != null) {
            return onMeasured(new Measured(
                    w,
                    MeasureResult.failed(
                            MeasureError.RUNTIME,
                            "the worker could not fetch workload " + w.workloadKey() + ": " + error,
                            0,
                            0)));
        }
        c.sofar().writeBytes(c.chunk().data());
        if (c.sofar().size() < c.chunk().total() && c.chunk().data().length > 0) {
            fetch(w, c.sofar(), c.sofar().size());
            return this;
        }
        try {
            byte[] bytes = c.sofar().toByteArray();
            if (options.corruptReferences()) corrupt(bytes);
            Path f = dir.resolve("workload-"
                    + Integer.toHexString(w.workloadKey().hashCode()) + "-" + workloadFiles.size() + ".bin");
            Files.write(f, bytes);
            workloadFiles.put(w.workloadKey(), f);
            while (workloadFiles.size() > WORKLOADS_KEPT) {
                var eldest = workloadFiles.entrySet().iterator().next();
                Files.deleteIfExists(eldest.getValue());
                workloadFiles.remove(eldest.getKey());
            }
        } catch (IOException e) {
            return onMeasured(new Measured(
                    w,
                    MeasureResult.failed(
                            MeasureError.RUNTIME,
                            "the worker could not store workload " + w.workloadKey() + ": " + e,
                            0,
                            0)));
        }
        startMeasuring(w);
        return this;
    }

    /**
     * Fault injection for the tests (a worker with bad memory, say): flips the last bytes of the workload, which hold
     * the reference outputs, so the worker's own check fails.
     */
    private static void corrupt(byte[] bytes) {
        for (int i = Math.max(0, bytes.length - 64); i < bytes.length; i++) bytes[i] ^= 0x55;
    }

    private void startMeasuring(Wire.Work w) {
        ActorRef<Command> self = getContext().getSelf();
        Path file = workloadFiles.get(w.workloadKey());
        CompletableFuture.supplyAsync(() -> measure(w, file), measuring)
                .whenComplete((r, e) -> self.tell(new Measured(
                        w, e == null ? r : MeasureResult.failed(MeasureError.RUNTIME, "worker: " + e, 0, 0))));
    }

    private MeasureResult measure(Wire.Work w, Path file) {
        long t0 = System.nanoTime();
        if (w.program().isEmpty()) {
            if (!options.simulate()) {
                return MeasureResult.failed(MeasureError.RUNTIME, "this worker does not simulate", 0, 0);
            }
            try {
                Thread.sleep(Math.round(w.simulatedSeconds() * 1e3));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return MeasureResult.ok(new double[] {w.simulatedCost()}, 0, (System.nanoTime() - t0) / 1e9);
        }
        if (executor == null) executor = new RemoteMeasurement.Executor(options.childJvmFlags(), 120);
        return executor.measure(new RemoteMeasurement.Program(w.program()), file, w.timeoutSeconds());
    }

    private Behavior<Command> onMeasured(Measured m) {
        measuredCount++;
        ActorRef<Command> self = getContext().getSelf();
        m.work().job().tell(new Wire.Result(m.work().itemId(), JobActor.id(self), self, Wire.Outcome.of(m.result())));
        busy = false;
        return next();
    }
}
