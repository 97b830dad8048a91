package dev.kiln.bench.cluster;

import dev.kiln.autoschedule.measure.FaultInjection;
import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.RemoteMeasurement;
import dev.kiln.ir.KilnException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;

/**
 * A measurement worker: it registers under its target's key, learns the jobs of that target from the receptionist,
 * and asks them for programs in turn (round robin over the jobs that have work, so two tuning jobs share the worker
 * evenly). It measures one program at a time, in its own child JVM ({@link RemoteMeasurement.Executor}: a program that
 * crashes or hangs costs that program, not the worker), on a thread of its own, and sends the result back to the job.
 * While it measures it asks for the next program ({@code Options.queue} 2, the default), so it does not wait a round
 * trip between two programs. Workloads are fetched from the job in pieces the first time a program of that workload
 * comes and kept in files (the last {@value #WORKLOADS_KEPT}).
 *
 * <p>A dead tuner never holds a worker up: a job that does not answer within {@link #REQUEST_PATIENCE} is not asked
 * again until it is heard from (its late answer is still taken), a job on a node the cluster marks unreachable is not
 * asked, and when a job stops (or its node is removed) the worker drops its programs, the one it measures included.
 */
final class WorkerActor extends AbstractBehavior<WorkerActor.Command> {
    /** What a worker receives: {@link Wire.WorkAvailable}, the answers {@link Wire.WorkReply} and the local ones. */
    interface Command {}

    private record JobsListed(Set<ActorRef<JobActor.Command>> jobs) implements Command {}

    private record JobGone(ActorRef<JobActor.Command> job) implements Command {}

    private record Reachability(Address address, boolean reachable) implements Command {}

    private record RequestTimedOut(long seq) implements Command {}

    private record Chunk(Wire.Work work, ByteArrayOutputStream sofar, Wire.WorkloadChunk chunk, String failure)
            implements Command {}

    private record Measured(Wire.Work work, MeasureResult result) implements Command {}

    private enum Tick implements Command {
        INSTANCE
    }

    static final int WORKLOADS_KEPT = 8;
    /** How long a job has to answer a request for a program before the worker turns to the other jobs. */
    static final Duration REQUEST_PATIENCE = Duration.ofSeconds(3);

    private static final Duration FETCH_TIMEOUT = Duration.ofSeconds(30);
    private static final int GONE_KEPT = 256;

    /**
     * How a worker measures, besides its target; {@code queue}: programs held at once, the one measured included (1:
     * ask only when idle; 2: ask for the next one while measuring); {@code faults}: the test hook of {@code
     * --fault-injection}, the programs (numbered from 1 in the order this worker starts measuring them) whose child JVM
     * is made to crash or hang ({@link FaultInjection}).
     */
    record Options(
            boolean simulate,
            boolean corruptReferences,
            List<String> childJvmFlags,
            int queue,
            Map<Integer, FaultInjection.Kind> faults) {
        Options {
            if (queue < 1 || queue > 4) throw new KilnException("worker queue must be 1..4 programs, got " + queue);
            faults = Map.copyOf(faults);
            if (!faults.isEmpty()) {
                List<String> flags = new ArrayList<>(childJvmFlags);
                flags.add(FaultInjection.CHILD_FLAG);
                childJvmFlags = flags;
            }
            childJvmFlags = List.copyOf(childJvmFlags);
        }

        Options(boolean simulate, boolean corruptReferences, List<String> childJvmFlags, int queue) {
            this(simulate, corruptReferences, childJvmFlags, queue, Map.of());
        }
    }

    private final String target;
    private final Options options;
    private final TimerScheduler<Command> timers;
    private final List<ActorRef<JobActor.Command>> jobs = new ArrayList<>();
    private final Set<ActorRef<JobActor.Command>> withWork = new HashSet<>();
    private final Set<ActorRef<JobActor.Command>> declinedAhead = new HashSet<>();
    private final Set<ActorRef<JobActor.Command>> silent = new HashSet<>();
    private final Set<ActorRef<JobActor.Command>> gone = new LinkedHashSet<>();
    private final Set<Address> unreachable = new HashSet<>();
    private final Deque<Wire.Work> queued = new ArrayDeque<>();
    private final Map<String, Path> workloadFiles = new LinkedHashMap<>(16, 0.75f, true);
    private final ExecutorService measuring;
    private final Path dir;
    private RemoteMeasurement.Executor executor;
    private ActorRef<JobActor.Command> lastServed;
    private Wire.Work current;
    private Future<?> measuringNow;
    private ActorRef<JobActor.Command> asking;
    private long askingSeq;
    private boolean askingAhead;
    private long nextSeq;
    private int programsStarted;

    static Behavior<Command> create(String target, Options options) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            timers.startTimerWithFixedDelay(Tick.INSTANCE, Duration.ofSeconds(2));
            return new WorkerActor(ctx, timers, target, options);
        }));
    }

    private WorkerActor(ActorContext<Command> ctx, TimerScheduler<Command> timers, String target, Options options)
            throws IOException {
        super(ctx);
        this.timers = timers;
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
        ActorRef<ClusterEvent.ReachabilityEvent> reach = ctx.messageAdapter(
                ClusterEvent.ReachabilityEvent.class,
                e -> new Reachability(e.member().address(), e instanceof ClusterEvent.ReachableMember));
        Cluster.get(ctx.getSystem())
                .subscriptions()
                .tell(Subscribe.create(reach, ClusterEvent.ReachabilityEvent.class));
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(JobsListed.class, this::onJobs)
                .onMessage(Wire.WorkAvailable.class, m -> {
                    if (gone.contains(m.job())) return this;
                    know(m.job());
                    withWork.add(m.job());
                    silent.remove(m.job());
                    return next();
                })
                .onMessage(Wire.Work.class, this::onWork)
                .onMessage(Wire.NoWork.class, this::onNoWork)
                .onMessage(RequestTimedOut.class, m -> {
                    // a tuner that was killed never answers: ask the other jobs, and this one when it is heard from
                    if (asking != null && askingSeq == m.seq()) {
                        silent.add(asking);
                        asking = null;
                    }
                    return next();
                })
                .onMessage(Reachability.class, this::onReachability)
                .onMessage(JobGone.class, this::onJobGone)
                .onMessage(Chunk.class, this::onChunk)
                .onMessage(Measured.class, this::onMeasured)
                .onMessage(Tick.class, m -> {
                    // a job that had nothing may have work again without its notice reaching us: ask them all
                    if (current == null && queued.isEmpty() && asking == null) withWork.addAll(jobs);
                    return next();
                })
                .onSignal(PostStop.class, s -> {
                    measuring.shutdownNow();
                    if (executor != null) executor.close();
                    return this;
                })
                .build();
    }

    private void know(ActorRef<JobActor.Command> job) {
        if (jobs.contains(job)) return;
        jobs.add(job);
        getContext().watchWith(job, new JobGone(job));
    }

    private Behavior<Command> onJobs(JobsListed l) {
        jobs.removeIf(j -> !l.jobs().contains(j));
        withWork.retainAll(l.jobs());
        declinedAhead.retainAll(l.jobs());
        silent.retainAll(l.jobs());
        for (ActorRef<JobActor.Command> j : l.jobs()) {
            if (!jobs.contains(j) && !gone.contains(j)) {
                know(j);
                withWork.add(j);
            }
        }
        return next();
    }

    private Behavior<Command> onReachability(Reachability r) {
        if (r.reachable()) {
            unreachable.remove(r.address());
        } else {
            unreachable.add(r.address());
            if (asking != null && asking.path().address().equals(r.address())) cancelAsk();
        }
        return next();
    }

    /** The job stopped, or its node left the cluster: its programs here are of no use to anyone. */
    private Behavior<Command> onJobGone(JobGone g) {
        ActorRef<JobActor.Command> job = g.job();
        jobs.remove(job);
        withWork.remove(job);
        declinedAhead.remove(job);
        silent.remove(job);
        gone.add(job);
        if (gone.size() > GONE_KEPT) gone.remove(gone.iterator().next());
        if (job.equals(asking)) cancelAsk();
        queued.removeIf(w -> w.job().equals(job));
        if (current != null && current.job().equals(job)) {
            if (measuringNow != null) measuringNow.cancel(true); // ends a sleep, or kills the child JVM
            current = null;
            measuringNow = null;
            startNext();
        }
        return next();
    }

    private void cancelAsk() {
        asking = null;
        timers.cancel(RequestTimedOut.class);
    }

    /**
     * Asks the next job with work after the one served last, when the worker holds fewer than {@code options.queue}
     * programs and is not waiting for an answer.
     */
    private Behavior<Command> next() {
        int have = (current == null ? 0 : 1) + queued.size();
        if (asking != null || have >= options.queue() || jobs.isEmpty()) return this;
        boolean ahead = have > 0;
        int start = lastServed == null ? 0 : jobs.indexOf(lastServed) + 1;
        for (int k = 0; k < jobs.size(); k++) {
            ActorRef<JobActor.Command> j = jobs.get(Math.floorMod(start + k, jobs.size()));
            if (!withWork.contains(j)
                    || silent.contains(j)
                    || unreachable.contains(j.path().address())
                    || (ahead && declinedAhead.contains(j))) continue;
            ActorRef<Command> self = getContext().getSelf();
            asking = j;
            askingSeq = nextSeq++;
            askingAhead = ahead;
            j.tell(new Wire.RequestWork(JobActor.id(self), target, self, askingSeq, ahead));
            timers.startSingleTimer(RequestTimedOut.class, new RequestTimedOut(askingSeq), REQUEST_PATIENCE);
            return this;
        }
        return this;
    }

    private boolean answers(Wire.WorkReply r) {
        silent.remove(r.job());
        if (asking == null || askingSeq != r.seq() || !asking.equals(r.job())) return false;
        cancelAsk();
        return true;
    }

    private Behavior<Command> onWork(Wire.Work w) {
        answers(w); // a late answer is taken too: the job counts the program as ours
        if (gone.contains(w.job())) return next();
        lastServed = w.job();
        queued.addLast(w);
        startNext();
        return next();
    }

    private Behavior<Command> onNoWork(Wire.NoWork n) {
        if (answers(n)) {
            if (askingAhead) declinedAhead.add(n.job());
            else withWork.remove(n.job());
        }
        return next();
    }

    /** When no program is being measured, starts the first one queued (fetching its workload first if needed). */
    private void startNext() {
        if (current != null || queued.isEmpty()) return;
        Wire.Work w = queued.pollFirst();
        current = w;
        if (w.program().isEmpty() || workloadFiles.containsKey(w.workloadKey())) {
            startMeasuring(w);
        } else {
            fetch(w, new ByteArrayOutputStream(Math.max(0, w.workloadBytes())), 0);
        }
    }

    private void fetch(Wire.Work w, ByteArrayOutputStream sofar, int offset) {
        getContext()
                .ask(
                        Wire.WorkloadChunk.class,
                        w.job(),
                        FETCH_TIMEOUT,
                        replyTo -> new Wire.FetchWorkload(w.workloadKey(), offset, replyTo),
                        (chunk, failure) -> new Chunk(w, sofar, chunk, failure == null ? null : failure.toString()));
    }

    private Behavior<Command> onChunk(Chunk c) {
        Wire.Work w = c.work();
        if (w != current) return this; // its job has gone
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
        if (!w.program().isEmpty() && executor == null) {
            executor = new RemoteMeasurement.Executor(options.childJvmFlags(), 120);
        }
        FaultInjection.Kind fault =
                w.program().isEmpty() ? null : options.faults().get(++programsStarted);
        measuringNow = measuring.submit(() -> {
            MeasureResult r;
            try {
                r = measure(w, file, fault);
            } catch (RuntimeException e) {
                r = MeasureResult.failed(MeasureError.RUNTIME, "worker: " + e, 0, 0);
            }
            self.tell(new Measured(w, r));
        });
    }

    private MeasureResult measure(Wire.Work w, Path file, FaultInjection.Kind fault) {
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
        RemoteMeasurement.Program program = new RemoteMeasurement.Program(w.program());
        if (fault != null) program = FaultInjection.mark(program, fault);
        return executor.measure(program, file, w.timeoutSeconds());
    }

    private Behavior<Command> onMeasured(Measured m) {
        if (m.work() != current) return this; // dropped: its job has gone
        ActorRef<Command> self = getContext().getSelf();
        m.work().job().tell(new Wire.Result(m.work().itemId(), JobActor.id(self), self, Wire.Outcome.of(m.result())));
        current = null;
        measuringNow = null;
        declinedAhead.clear();
        startNext();
        return next();
    }
}
