package dev.kiln.onnx;

import dev.kiln.ir.KilnException;
import dev.kiln.onnx.proto.Onnx.StringStringEntryProto;
import dev.kiln.onnx.proto.Onnx.TensorProto;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

/**
 * ONNX external data: an initializer whose bytes live in a side file next to the model
 * ({@code external_data} keys location, offset, length; the layout of raw_data). The location is
 * relative to the model's directory and may not leave it.
 */
final class ExternalData {
    private ExternalData() {}

    static ByteBuffer read(TensorProto t, Path dir, String name) {
        Map<String, String> kv = new HashMap<>();
        for (StringStringEntryProto e : t.getExternalDataList()) kv.put(e.getKey(), e.getValue());
        String location = kv.get("location");
        if (location == null || location.isEmpty())
            throw new KilnException("tensor " + name + ": external data without a 'location'");
        Path base = dir.toAbsolutePath().normalize();
        Path file = base.resolve(location).normalize();
        if (Path.of(location).isAbsolute() || !file.startsWith(base)) {
            throw new KilnException("tensor " + name + ": external data location '" + location
                    + "' is not inside the model's directory " + base);
        }
        long offset = number(kv, "offset", 0, name), length;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            length = number(kv, "length", size - offset, name);
            if (offset < 0 || length < 0 || offset + length > size) {
                throw new KilnException("tensor " + name + ": external data [" + offset + ", " + (offset + length)
                        + ") runs past the end of '" + location + "' (" + size + " bytes)");
            }
            if (length > Integer.MAX_VALUE)
                throw new KilnException("tensor " + name + ": " + length
                        + " bytes of external data is more than one tensor Kiln reads (2 GB)");
            ByteBuffer b = ByteBuffer.allocate((int) length);
            while (b.hasRemaining()) {
                if (ch.read(b, offset + b.position()) < 0)
                    throw new KilnException("tensor " + name + ": '" + location + "' ended early");
            }
            return b.flip();
        } catch (IOException e) {
            throw new KilnException("tensor " + name + ": cannot read external data file '" + file + "': " + e);
        }
    }

    private static long number(Map<String, String> kv, String key, long dflt, String name) {
        String v = kv.get(key);
        if (v == null) return dflt;
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new KilnException("tensor " + name + ": external data '" + key + "' = '" + v + "' is not a number");
        }
    }
}
