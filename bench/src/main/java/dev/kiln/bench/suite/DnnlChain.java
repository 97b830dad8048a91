package dev.kiln.bench.suite;

import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_DST;
import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_SRC;
import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_WEIGHTS;

import dev.kiln.ir.DType;
import dev.kiln.runtime.NDArray;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bytedeco.dnnl.IntMemoryMap;
import org.bytedeco.dnnl.eltwise_forward;
import org.bytedeco.dnnl.engine;
import org.bytedeco.dnnl.global.dnnl;
import org.bytedeco.dnnl.matmul;
import org.bytedeco.dnnl.memory;
import org.bytedeco.dnnl.post_ops;
import org.bytedeco.dnnl.primitive;
import org.bytedeco.dnnl.primitive_attr;
import org.bytedeco.dnnl.primitive_desc;
import org.bytedeco.dnnl.reduction;
import org.bytedeco.dnnl.softmax_forward;
import org.bytedeco.dnnl.stream;

/**
 * The suite's workloads that take oneDNN more than one primitive, run in order as one call:
 * <ul>
 *   <li>TBS: query and value [B, L, H, D] are read as their transposes [B, H, L, D] and [B, H, D, L]
 *       through strides (no copy, as the subgraph's transposes), one {@code matmul} writes the
 *       scores in the layout it picks, and {@code softmax_forward} normalises them in place.</li>
 *   <li>NRM: oneDNN's Lp-norm reductions ({@code reduction_norm_lp_*}) exist only as its reference
 *       kernel ("ref:any", 60x slower than its JIT sum here), so NRM is what a oneDNN user writes
 *       instead: {@code eltwise_square}, then a JIT {@code reduction_sum} over [B, M * N] with an
 *       {@code eltwise_sqrt} post-op.</li>
 * </ul>
 */
final class DnnlChain implements Baseline.Prepared {
    private final stream strm;
    private final engine eng;
    private final List<primitive> prims = new ArrayList<>();
    private final List<IntMemoryMap> args = new ArrayList<>();
    private final List<primitive_desc> pds = new ArrayList<>();
    private memory result;
    private memory.desc userResult;
    private long[] outDims;

    private DnnlChain(engine eng, stream strm) {
        this.eng = eng;
        this.strm = strm;
    }

    private void add(primitive_desc pd, IntMemoryMap a) {
        pds.add(pd);
        prims.add(new primitive(pd));
        args.add(a);
    }

    private static IntMemoryMap map(int k1, memory m1, int k2, memory m2) {
        IntMemoryMap m = new IntMemoryMap();
        m.put(k1, m1);
        m.put(k2, m2);
        return m;
    }

    static DnnlChain attention(engine eng, stream strm, SuiteWorkload w, Map<String, NDArray> in, long[] outDims) {
        long b = w.p(0), l = w.p(1), h = w.p(2), d = w.p(3);
        memory.desc q = new memory.desc(new long[] {b, h, l, d}, DnnlMemory.F32, new long[] {l * h * d, d, h * d, 1});
        memory.desc v = new memory.desc(new long[] {b, h, d, l}, DnnlMemory.F32, new long[] {l * h * d, d, 1, h * d});
        DnnlChain c = new DnnlChain(eng, strm);
        matmul.primitive_desc mm = new matmul.primitive_desc(eng, q, v, DnnlMemory.any(b, h, l, l));
        memory scores = new memory(mm.dst_desc(), eng);
        IntMemoryMap mmArgs = map(
                DNNL_ARG_SRC,
                DnnlMemory.wrap(q, eng, in.get("query")),
                DNNL_ARG_WEIGHTS,
                DnnlMemory.wrap(v, eng, in.get("value")));
        mmArgs.put(DNNL_ARG_DST, scores);
        c.add(mm, mmArgs);
        c.add(
                new softmax_forward.primitive_desc(
                        eng,
                        dnnl.prop_kind.forward_inference,
                        dnnl.algorithm.softmax_accurate,
                        mm.dst_desc(),
                        mm.dst_desc(),
                        3),
                map(DNNL_ARG_SRC, scores, DNNL_ARG_DST, scores));
        return c.result(scores, DnnlMemory.rowMajor(b, h, l, l), outDims);
    }

    static DnnlChain norm(engine eng, stream strm, SuiteWorkload w, Map<String, NDArray> in, long[] outDims) {
        long b = w.p(0), mn = w.p(1) * w.p(2);
        memory.desc src = DnnlMemory.rowMajor(b, mn), dst = DnnlMemory.rowMajor(b, 1);
        DnnlChain c = new DnnlChain(eng, strm);
        memory squares = new memory(src, eng), out = new memory(dst, eng);
        c.add(
                new eltwise_forward.primitive_desc(
                        eng, dnnl.prop_kind.forward_inference, dnnl.algorithm.eltwise_square, src, src),
                map(DNNL_ARG_SRC, DnnlMemory.wrap(src, eng, in.get("A")), DNNL_ARG_DST, squares));
        post_ops po = new post_ops();
        po.append_eltwise(dnnl.algorithm.eltwise_sqrt, 0f, 0f);
        primitive_attr attr = new primitive_attr();
        attr.set_post_ops(po);
        c.add(
                new reduction.primitive_desc(eng, dnnl.algorithm.reduction_sum, src, dst, 0f, 0f, attr, false),
                map(DNNL_ARG_SRC, squares, DNNL_ARG_DST, out));
        return c.result(out, dst, outDims);
    }

    private DnnlChain result(memory m, memory.desc user, long[] dims) {
        result = m;
        userResult = user;
        outDims = dims;
        return this;
    }

    @Override
    public void run() {
        for (int i = 0; i < prims.size(); i++) prims.get(i).execute(strm, args.get(i));
        strm._wait();
    }

    @Override
    public NDArray output() {
        NDArray out = NDArray.allocate(DType.FLOAT32, outDims);
        DnnlMemory.copy(result, DnnlMemory.wrap(userResult, eng, out), strm);
        return out;
    }

    @Override
    public String kernel() {
        List<String> parts = new ArrayList<>();
        for (primitive_desc pd : pds)
            parts.add(pd.get_kind() + " " + pd.impl_info_str().getString());
        return String.join(" + ", parts);
    }

    @Override
    public void close() {
        prims.forEach(primitive::close);
        pds.forEach(primitive_desc::close);
    }
}
