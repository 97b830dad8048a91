package dev.kiln.autoschedule.measure;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link Workload} in a file, how the tuner hands the reference outputs to the measuring
 * worker: the magic line {@code KILN-WORKLOAD-2}, the seed, the arguments (name, dtype, shape,
 * input or output, rounded from floats), then each reference output's elements in row-major order and native byte
 * order, as {@link NDArray} stores them.
 */
final class WorkloadFile {
    private static final String MAGIC = "KILN-WORKLOAD-2";

    private WorkloadFile() {}

    static void write(Workload w, Path file) {
        try (OutputStream os = Files.newOutputStream(file);
                DataOutputStream out = new DataOutputStream(os)) {
            out.writeUTF(MAGIC);
            out.writeLong(w.seed());
            out.writeInt(w.args().size());
            for (ArgumentSpec a : w.args()) {
                out.writeUTF(a.name());
                out.writeUTF(a.dtype().displayName());
                out.writeBoolean(a.input());
                out.writeBoolean(a.rounded());
                long[] shape = a.shape();
                out.writeInt(shape.length);
                for (long s : shape) out.writeLong(s);
            }
            out.writeInt(w.references().size());
            out.flush();
            for (NDArray r : w.references()) {
                NDArray compact = r.isCompact() ? r : r.copy();
                try {
                    long bytes = compact.numElements() * compact.dtype().bytes();
                    out.writeLong(bytes);
                    out.flush();
                    var channel = Channels.newChannel(os);
                    for (long off = 0; off < bytes; off += CHUNK) {
                        ByteBuffer b = compact.segment()
                                .asSlice(off, Math.min(CHUNK, bytes - off))
                                .asByteBuffer();
                        while (b.hasRemaining()) channel.write(b);
                    }
                } finally {
                    if (compact != r) compact.close();
                }
            }
        } catch (IOException e) {
            throw new KilnException("cannot write the workload file " + file + ": " + e.getMessage());
        }
    }

    private static final long CHUNK = 1 << 20;

    static Workload read(Path file) {
        List<NDArray> refs = new ArrayList<>();
        try (InputStream is = Files.newInputStream(file);
                DataInputStream in = new DataInputStream(is)) {
            String magic = in.readUTF();
            if (!magic.equals(MAGIC)) throw new KilnException(file + " is not a workload file (" + magic + ")");
            long seed = in.readLong();
            int n = in.readInt();
            List<ArgumentSpec> args = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                String name = in.readUTF();
                DType dtype = DType.parse(in.readUTF());
                boolean input = in.readBoolean(), rounded = in.readBoolean();
                long[] shape = new long[in.readInt()];
                for (int d = 0; d < shape.length; d++) shape[d] = in.readLong();
                args.add(new ArgumentSpec(name, dtype, shape, input, rounded));
            }
            int nRefs = in.readInt();
            List<ArgumentSpec> outs = args.stream().filter(a -> !a.input()).toList();
            if (nRefs != 0 && nRefs != outs.size()) {
                throw new KilnException(file + " holds " + nRefs + " references for " + outs.size() + " outputs");
            }
            var channel = Channels.newChannel(in);
            for (int r = 0; r < nRefs; r++) {
                ArgumentSpec a = outs.get(r);
                NDArray arr = NDArray.allocate(a.dtype(), a.shape());
                refs.add(arr);
                long bytes = in.readLong();
                if (bytes != arr.numElements() * a.dtype().bytes()) {
                    throw new KilnException(file + ": reference '" + a.name() + "' has " + bytes + " bytes, expected "
                            + arr.numElements() * a.dtype().bytes());
                }
                for (long off = 0; off < bytes; off += CHUNK) {
                    ByteBuffer b = arr.segment()
                            .asSlice(off, Math.min(CHUNK, bytes - off))
                            .asByteBuffer();
                    while (b.hasRemaining()) {
                        if (channel.read(b) < 0)
                            throw new KilnException(file + " ends inside reference '" + a.name() + "'");
                    }
                }
            }
            return new Workload(args, seed, refs);
        } catch (IOException e) {
            refs.forEach(NDArray::close);
            throw new KilnException("cannot read the workload file " + file + ": " + e.getMessage());
        } catch (RuntimeException e) {
            refs.forEach(NDArray::close);
            throw e;
        }
    }
}
