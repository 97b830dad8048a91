package dev.kiln.bench.cluster;

import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.ir.KilnException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;

/**
 * The tuner's side of a job: it holds the programs a tuning run waits for and hands them to workers of its target
 * as they ask ({@link Wire.RequestWork}); workers pull, so a worker holds at most the program it measures and the one
 * it asked for ahead of time (granted only while at least as many programs wait as there are workers), and a worker
 * of another target never learns the job exists (jobs and workers meet in Pekko's receptionist under their target's
 * key, {@link #jobKey}/{@link #workerKey}). A job that stops fails the batches still waiting.
 *
 * <p>Faults: a worker that dies, leaves or becomes unreachable while it holds a program has it re-queued for the
 * others; a program is answered once (the first result wins, later ones are counted and dropped), so none is lost or
 * measured twice into the log. A {@link MeasureError#WRONG_RESULT} is checked on a second worker: if that one measures
 * the program correctly, the first worker is reported and sent no more work. A worker past a program's deadline has
 * the program taken back (after three tries the program is a {@link MeasureError#TIMEOUT}). When no worker of the
 * target has been seen for {@code noWorkerTimeout}, waiting batches fail with a {@link KilnException}.
 */
final class JobActor extends AbstractBehavior<JobActor.Command> {
    /** What a job receives: the wire messages of {@link Wire} and the local ones below. */
    interface Command {}

    /** A batch of programs; the future gets one result per item, in order. */
    record Submit(List<WorkItem> items, Map<String, byte[]> workloads, CompletableFuture<List<MeasureResult>> done)
            implements Command {}

    record Report(CompletableFuture<JobReport> reply) implements Command {}

    /** How many workers of the target are known. */
    record CountWorkers(CompletableFuture<Integer> reply) implements Command {}

    private record WorkersListed(Set<ActorRef<WorkerActor.Command>> workers) implements Command {}

    private record WorkerGone(ActorRef<WorkerActor.Command> worker) implements Command {}

    private record Unreachable(Address address) implements Command {}

    private enum Tick implements Command {
        INSTANCE
    }

    enum Stop implements Command {
        INSTANCE
    }

    static final int CHUNK_BYTES = 128 * 1024;
    private static final int MAX_ATTEMPTS = 3;
    private static final double DEADLINE_GRACE_SECONDS = 60;

    static ServiceKey<JobActor.Command> jobKey(String target) {
        return ServiceKey.create(JobActor.Command.class, "kiln-job|" + target);
    }

    static ServiceKey<WorkerActor.Command> workerKey(String target) {
        return ServiceKey.create(WorkerActor.Command.class, "kiln-worker|" + target);
    }

    private static final class Item {
        final long id;
        final Batch batch;
        final int index;
        final WorkItem work;
        final Set<String> excluded = new HashSet<>();
        int attempts;
        String suspect;
        ActorRef<WorkerActor.Command> holder;
        long deadlineNanos;

        Item(long id, Batch batch, int index, WorkItem work) {
            this.id = id;
            this.batch = batch;
            this.index = index;
            this.work = work;
        }
    }

    private static final class Batch {
        final MeasureResult[] results;
        int remaining;
        final CompletableFuture<List<MeasureResult>> done;

        Batch(int n, CompletableFuture<List<MeasureResult>> done) {
            this.results = new MeasureResult[n];
            this.remaining = n;
            this.done = done;
        }
    }

    private final String target;
    private final Duration noWorkerTimeout;
    private final Map<String, byte[]> workloads = new HashMap<>();
    private final Map<Long, Item> items = new HashMap<>();
    private final Deque<Item> pending = new ArrayDeque<>();
    private final Map<ActorRef<WorkerActor.Command>, Set<Item>> holding = new HashMap<>();
    private final Set<ActorRef<WorkerActor.Command>> workers = new HashSet<>();
    private final Set<String> quarantined = new HashSet<>();
    private final Map<String, Long> byWorker = new TreeMap<>();
    private final List<String> faults = new ArrayList<>();
    private long nextId;
    private long dispatched;
    private long completed;
    private long requeued;
    private long duplicatesDropped;
    private long noWorkerSince = System.nanoTime();

    static Behavior<Command> create(String target, Duration noWorkerTimeout) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            timers.startTimerWithFixedDelay(Tick.INSTANCE, Duration.ofMillis(500));
            return new JobActor(ctx, target, noWorkerTimeout);
        }));
    }

    private JobActor(ActorContext<Command> ctx, String target, Duration noWorkerTimeout) {
        super(ctx);
        this.target = target;
        this.noWorkerTimeout = noWorkerTimeout;
        ActorRef<Receptionist.Listing> listings = ctx.messageAdapter(
                Receptionist.Listing.class, l -> new WorkersListed(l.getServiceInstances(workerKey(target))));
        ctx.getSystem().receptionist().tell(Receptionist.subscribe(workerKey(target), listings));
        ctx.getSystem().receptionist().tell(Receptionist.register(jobKey(target), ctx.getSelf()));
        ActorRef<ClusterEvent.UnreachableMember> unreachable = ctx.messageAdapter(
                ClusterEvent.UnreachableMember.class,
                e -> new Unreachable(e.member().address()));
        Cluster.get(ctx.getSystem())
                .subscriptions()
                .tell(Subscribe.create(unreachable, ClusterEvent.UnreachableMember.class));
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Submit.class, this::onSubmit)
                .onMessage(Wire.RequestWork.class, this::onRequest)
                .onMessage(Wire.Result.class, this::onResult)
                .onMessage(Wire.FetchWorkload.class, this::onFetch)
                .onMessage(WorkersListed.class, this::onWorkers)
                .onMessage(WorkerGone.class, m -> takeBack(h -> h.equals(m.worker()), "left the cluster"))
                .onMessage(
                        Unreachable.class,
                        m -> takeBack(h -> h.path().address().equals(m.address()), "became unreachable"))
                .onMessage(Tick.class, m -> onTick())
                .onMessage(Stop.class, m -> Behaviors.stopped())
                .onSignal(PostStop.class, s -> {
                    failAll(new KilnException("the cluster job of target '" + target + "' was closed with "
                            + items.size() + " programs unmeasured"));
                    return this;
                })
                .onMessage(Report.class, this::onReport)
                .onMessage(CountWorkers.class, m -> {
                    m.reply().complete(workers.size());
                    return this;
                })
                .build();
    }

    private Behavior<Command> onSubmit(Submit s) {
        workloads.putAll(s.workloads());
        Batch b = new Batch(s.items().size(), s.done());
        if (s.items().isEmpty()) s.done().complete(List.of());
        for (int i = 0; i < s.items().size(); i++) {
            Item it = new Item(nextId++, b, i, s.items().get(i));
            items.put(it.id, it);
            pending.addLast(it);
        }
        announce();
        return this;
    }

    private void announce() {
        if (pending.isEmpty()) return;
        for (ActorRef<WorkerActor.Command> w : workers)
            w.tell(new Wire.WorkAvailable(getContext().getSelf()));
    }

    /** A worker's name in reports and checks: its actor path, with its node's address. */
    static String id(ActorRef<?> worker) {
        return worker.path().toString();
    }

    private Behavior<Command> onRequest(Wire.RequestWork r) {
        String wid = id(r.worker());
        ActorRef<Command> self = getContext().getSelf();
        if (!r.target().equals(target)) {
            fault("worker " + wid + " of target '" + r.target() + "' asked for work of target '" + target
                    + "'; refused");
            r.worker().tell(new Wire.NoWork(r.seq(), self, "this job measures on another target"));
            return this;
        }
        if (quarantined.contains(wid)) {
            r.worker().tell(new Wire.NoWork(r.seq(), self, "this worker returned wrong results and gets no more work"));
            return this;
        }
        if (r.ahead() && pending.size() < Math.max(1, workers.size())) {
            // near the end of the batch a program held ahead would wait behind another while some worker idles
            r.worker().tell(new Wire.NoWork(r.seq(), self, "few programs left: not ahead of time"));
            return this;
        }
        Iterator<Item> it = pending.iterator();
        while (it.hasNext()) {
            Item item = it.next();
            if (item.excluded.contains(wid)) continue;
            it.remove();
            item.holder = r.worker();
            item.attempts++;
            item.deadlineNanos =
                    System.nanoTime() + (long) ((item.work.timeoutSeconds() + DEADLINE_GRACE_SECONDS) * 1e9);
            Set<Item> held = holding.get(r.worker());
            if (held == null) {
                held = new LinkedHashSet<>();
                holding.put(r.worker(), held);
                getContext().watchWith(r.worker(), new WorkerGone(r.worker()));
            }
            held.add(item);
            dispatched++;
            WorkItem w = item.work;
            byte[] wl = workloads.get(w.workloadKey());
            r.worker()
                    .tell(new Wire.Work(
                            r.seq(),
                            item.id,
                            w.workloadKey(),
                            wl == null ? 0 : wl.length,
                            w.program(),
                            w.timeoutSeconds(),
                            w.simulatedSeconds(),
                            w.simulatedCost(),
                            self));
            return this;
        }
        r.worker().tell(new Wire.NoWork(r.seq(), self, "nothing to measure"));
        return this;
    }

    /** {@code item} is no longer held by its holder (answered, or taken back). */
    private void release(Item item) {
        if (item.holder == null) return;
        Set<Item> held = holding.get(item.holder);
        if (held != null) held.remove(item);
        item.holder = null;
    }

    private Behavior<Command> onResult(Wire.Result r) {
        String wid = id(r.worker());
        Item item = items.get(r.itemId());
        if (item == null) {
            duplicatesDropped++;
            return this;
        }
        if (item.holder == null) pending.remove(item); // a held program is not waiting
        release(item);
        MeasureResult result;
        try {
            result = r.outcome().toResult();
        } catch (RuntimeException e) {
            result = MeasureResult.failed(
                    MeasureError.RUNTIME, "worker " + wid + " sent a malformed result: " + e.getMessage(), 0, 0);
        }
        if (result.error() == MeasureError.WRONG_RESULT && item.suspect == null && otherWorkers(wid)) {
            item.suspect = wid;
            item.excluded.add(wid);
            requeue(item, null);
            return this;
        }
        if (item.suspect != null && result.error() == MeasureError.NONE) {
            fault("worker " + item.suspect + " returned a wrong result (" + firstLine(item) + ") that worker " + wid
                    + " did not reproduce: it gets no more work");
            quarantined.add(item.suspect);
        }
        byWorker.merge(wid, 1L, Long::sum);
        complete(item, result);
        return this;
    }

    private static String firstLine(Item item) {
        return "program " + item.id + " of workload " + item.work.workloadKey();
    }

    private boolean otherWorkers(String workerId) {
        return workers.stream().map(JobActor::id).anyMatch(id -> !id.equals(workerId) && !quarantined.contains(id));
    }

    private void complete(Item item, MeasureResult result) {
        items.remove(item.id);
        completed++;
        Batch b = item.batch;
        b.results[item.index] = result;
        if (--b.remaining == 0) b.done.complete(Arrays.asList(b.results));
    }

    private void requeue(Item item, String why) {
        if (!items.containsKey(item.id)) return;
        release(item);
        requeued++;
        if (why != null && item.attempts >= MAX_ATTEMPTS) {
            complete(
                    item,
                    MeasureResult.failed(
                            MeasureError.TIMEOUT,
                            "no worker finished the program in " + item.attempts + " tries (last: the worker " + why
                                    + ")",
                            0,
                            0));
            return;
        }
        pending.addFirst(item);
        announce();
    }

    private Behavior<Command> takeBack(java.util.function.Predicate<ActorRef<WorkerActor.Command>> gone, String why) {
        List<Item> back = new ArrayList<>();
        for (var e : holding.entrySet()) if (gone.test(e.getKey())) back.addAll(e.getValue());
        for (Item item : back) requeue(item, why);
        return this;
    }

    private Behavior<Command> onFetch(Wire.FetchWorkload f) {
        byte[] w = workloads.get(f.key());
        if (w == null) {
            f.replyTo()
                    .tell(new Wire.WorkloadChunk(
                            f.key(), f.offset(), new byte[0], 0, "this job has no workload " + f.key()));
        } else {
            int from = Math.max(0, Math.min(f.offset(), w.length));
            int to = Math.min(w.length, from + CHUNK_BYTES);
            f.replyTo().tell(new Wire.WorkloadChunk(f.key(), from, Arrays.copyOfRange(w, from, to), w.length, ""));
        }
        return this;
    }

    private Behavior<Command> onWorkers(WorkersListed l) {
        Set<ActorRef<WorkerActor.Command>> added = new HashSet<>(l.workers());
        added.removeAll(workers);
        workers.clear();
        workers.addAll(l.workers());
        if (!workers.isEmpty()) noWorkerSince = -1;
        else if (noWorkerSince < 0) noWorkerSince = System.nanoTime();
        if (!pending.isEmpty())
            for (ActorRef<WorkerActor.Command> w : added)
                w.tell(new Wire.WorkAvailable(getContext().getSelf()));
        return this;
    }

    private Behavior<Command> onTick() {
        long now = System.nanoTime();
        List<Item> late = new ArrayList<>();
        for (Set<Item> held : holding.values()) for (Item item : held) if (now - item.deadlineNanos > 0) late.add(item);
        for (Item item : late) {
            fault("worker " + item.holder.path() + " missed the deadline of program " + item.id);
            requeue(item, "missed its deadline");
        }
        holding.values().removeIf(Set::isEmpty);
        if (!pending.isEmpty()) {
            if (noWorkerSince >= 0 && now - noWorkerSince > noWorkerTimeout.toNanos()) {
                failAll(new KilnException("no measurement worker of target '" + target + "' has joined the "
                        + "cluster for " + noWorkerTimeout.toSeconds() + " s (start one with `./kiln worker --join "
                        + "HOST:PORT --keystore FILE`; its target must be the tuner's)"));
            } else announce();
        }
        return this;
    }

    private void failAll(KilnException e) {
        Set<Batch> batches = new HashSet<>();
        for (Item it : items.values()) batches.add(it.batch);
        items.clear();
        pending.clear();
        holding.clear();
        for (Batch b : batches) b.done.completeExceptionally(e);
    }

    private Behavior<Command> onReport(Report r) {
        List<String> q = new ArrayList<>(quarantined);
        q.sort(null);
        Map<String, Integer> held = new TreeMap<>();
        for (var e : holding.entrySet())
            if (!e.getValue().isEmpty()) held.put(id(e.getKey()), e.getValue().size());
        r.reply()
                .complete(new JobReport(
                        dispatched,
                        completed,
                        requeued,
                        duplicatesDropped,
                        new LinkedHashMap<>(byWorker),
                        faults,
                        q,
                        held));
        return this;
    }

    private void fault(String message) {
        faults.add(message);
        getContext().getLog().warn("kiln cluster: {}", message);
        System.err.println("kiln cluster: " + message);
    }
}
