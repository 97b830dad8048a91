package dev.kiln.bench.suite;

import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_DST;
import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_SRC;
import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_WEIGHTS;

import dev.kiln.ir.DType;
import dev.kiln.runtime.NDArray;
import java.util.Map;
import org.bytedeco.dnnl.IntMemoryMap;
import org.bytedeco.dnnl.engine;
import org.bytedeco.dnnl.matmul;
import org.bytedeco.dnnl.memory;
import org.bytedeco.dnnl.primitive;
import org.bytedeco.dnnl.softmax_forward;
import org.bytedeco.dnnl.stream;
import org.bytedeco.dnnl.global.dnnl;

/**
 * TBS in oneDNN: query and value [B, L, H, D] are read as their transposes [B, H, L, D] and
 * [B, H, D, L] through strides (no copy, as the subgraph's transposes), one {@code matmul} writes
 * the scores in the layout it picks, and {@code softmax_forward} normalises them in place.
 */
record DnnlAttention(engine eng, stream strm) {

    Baseline.Prepared prepare(SuiteWorkload w, Map<String, NDArray> in, long[] outDims) {
        long b = w.p(0), l = w.p(1), h = w.p(2), d = w.p(3);
        memory.desc q = new memory.desc(new long[] {b, h, l, d}, DnnlMemory.F32, new long[] {l * h * d, d, h * d, 1});
        memory.desc v = new memory.desc(new long[] {b, h, d, l}, DnnlMemory.F32, new long[] {l * h * d, d, 1, h * d});
        matmul.primitive_desc mm = new matmul.primitive_desc(eng, q, v, DnnlMemory.any(b, h, l, l));
        memory scores = new memory(mm.dst_desc(), eng);
        softmax_forward.primitive_desc sm = new softmax_forward.primitive_desc(eng, dnnl.prop_kind.forward_inference,
                dnnl.algorithm.softmax_accurate, mm.dst_desc(), mm.dst_desc(), 3);
        primitive mmp = new primitive(mm), smp = new primitive(sm);
        IntMemoryMap mmArgs = new IntMemoryMap();
        mmArgs.put(DNNL_ARG_SRC, DnnlMemory.wrap(q, eng, in.get("query")));
        mmArgs.put(DNNL_ARG_WEIGHTS, DnnlMemory.wrap(v, eng, in.get("value")));
        mmArgs.put(DNNL_ARG_DST, scores);
        IntMemoryMap smArgs = new IntMemoryMap();
        smArgs.put(DNNL_ARG_SRC, scores);
        smArgs.put(DNNL_ARG_DST, scores);
        String kernel = "matmul " + mm.impl_info_str().getString() + " + softmax " + sm.impl_info_str().getString();
        return new Baseline.Prepared() {
            @Override
            public void run() {
                mmp.execute(strm, mmArgs);
                smp.execute(strm, smArgs);
                strm._wait();
            }

            @Override
            public NDArray output() {
                NDArray out = NDArray.allocate(DType.FLOAT32, outDims);
                DnnlMemory.copy(scores, DnnlMemory.wrap(DnnlMemory.rowMajor(b, h, l, l), eng, out), strm);
                return out;
            }

            @Override
            public String kernel() { return kernel; }

            @Override
            public void close() {
                mmp.close();
                smp.close();
                mm.close();
                sm.close();
            }
        };
    }
}
