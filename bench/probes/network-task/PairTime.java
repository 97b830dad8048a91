package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.ir.Buffer;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CacheEviction;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * model log threads producer consumer: the consumer task's log best timed (medians of 200 calls, five rounds) warm;
 * right after the producer task's program wrote its input (as in the network); after the producer with every
 * argument of the consumer evicted; and in the tuner's state (arguments evicted, 32 MB written dirty).
 */
public class PairTime {
    public static void main(String[] a) throws Exception {
        Target target = Probes.target(Integer.parseInt(a[2]));
        List<NetworkTask> tasks = Probes.tasks(a[0], target);
        CompiledKernel p = compile(tasks.get(Integer.parseInt(a[3])), a[1], target);
        CompiledKernel c = compile(tasks.get(Integer.parseInt(a[4])), a[1], target);
        NDArray[] pa = Probes.randomArgs(p.func().params());
        NDArray[] ca = Probes.randomArgs(c.func().params());
        NDArray out = pa[pa.length - 1];
        if (!Arrays.equals(out.shape(), ca[0].shape()))
            throw new IllegalArgumentException("producer output " + Arrays.toString(out.shape()) + " is not the consumer's "
                    + "first argument " + Arrays.toString(ca[0].shape()));
        ca[0] = out;
        CacheEviction ev = Backend.forTarget(target).cacheEviction(target).orElseThrow();
        MemorySegment dirty = Arena.ofAuto().allocate(32L << 20, 64);
        int n = 200;
        for (int i = 0; i < 50; i++) {
            p.call(pa);
            c.call(ca);
        }
        String[] names = {"warm", "after producer", "producer+evict", "evict+32M dirty", "producer alone"};
        for (int round = 0; round < 5; round++) {
            StringBuilder sb = new StringBuilder("round " + round + ":");
            for (int mode = 0; mode < names.length; mode++) {
                double[] s = new double[n];
                for (int i = 0; i < n; i++) {
                    if (mode == 1 || mode == 2) p.call(pa);
                    if (mode == 2 || mode == 3) for (NDArray x : ca) ev.evict(x.segment());
                    if (mode == 3) for (long off = 0; off < dirty.byteSize(); off += 64)
                        dirty.set(ValueLayout.JAVA_LONG, off, off + i);
                    if (mode == 4) for (NDArray x : pa) ev.evict(x.segment());
                    long t0 = System.nanoTime();
                    if (mode == 4) p.call(pa);
                    else c.call(ca);
                    s[i] = (System.nanoTime() - t0) / 1e6;
                }
                Arrays.sort(s);
                sb.append(String.format(" %s %.3f", names[mode], s[n / 2]));
            }
            System.out.println(sb);
        }
    }

    private static CompiledKernel compile(NetworkTask t, String log, Target target) throws Exception {
        var best = AutoSchedule.bestProgram(t.task(), Path.of(log));
        WeightLayouts wl = WeightLayouts.of(t, best.schedule());
        System.out.printf("task %d tuned %.3f ms%n", t.id(), best.seconds() * 1e3);
        return AutoSchedule.compile(wl.schedule(), target, "probe" + t.id());
    }
}
