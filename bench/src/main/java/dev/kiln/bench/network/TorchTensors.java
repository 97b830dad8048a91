package dev.kiln.bench.network;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;

/** Copies between Kiln's {@link NDArray}s and PyTorch's float32 tensors. */
public final class TorchTensors {
    private TorchTensors() {}

    /** A fresh contiguous float32 tensor with the array's shape and elements. */
    public static Tensor toTorch(NDArray a) {
        if (a.dtype() != DType.FLOAT32) throw new KilnException("TorchNetwork: float32 only, got " + a);
        NDArray src = a.isCompact() ? a : a.copy();
        try {
            Tensor t = torch.empty(a.shape());
            long bytes = a.numElements() * 4L;
            MemorySegment dst = MemorySegment.ofAddress(t.data_ptr().address()).reinterpret(bytes);
            MemorySegment.copy(src.segment(), 0, dst, 0, bytes);
            return t;
        } finally {
            if (src != a) src.close();
        }
    }

    /** A fresh compact NDArray of {@code dims} holding the elements of contiguous float32 tensor {@code t}. */
    public static NDArray toKiln(Tensor t, long[] dims) {
        long n = t.numel();
        long expect = Arrays.stream(dims).reduce(1, Math::multiplyExact);
        if (n != expect || !t.is_contiguous()) {
            throw new KilnException("TorchNetwork: result has " + n + " elements (contiguous " + t.is_contiguous()
                    + "), expected " + Arrays.toString(dims));
        }
        NDArray out = NDArray.allocate(DType.FLOAT32, dims);
        MemorySegment src = MemorySegment.ofAddress(t.data_ptr().address()).reinterpret(n * 4L);
        MemorySegment.copy(src, 0, out.segment(), 0, n * 4L);
        return out;
    }
}
