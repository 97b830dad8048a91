package dev.kiln.tir.json;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Reducer;
import dev.kiln.ir.Var;
import dev.kiln.tir.PrimFunc;
import java.lang.reflect.RecordComponent;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Structural equality of two programs up to a renaming of the objects with identity: the
 * variables, buffers (views included) and reducers of one must correspond one to one with those
 * of the other, with equal definitions, and every node must match field by field (floats
 * bitwise, so -0.0 differs from 0.0 and NaN equals NaN). Stronger than comparing printouts, which
 * cannot tell two variables named {@code i} apart.
 */
final class Isomorphism {
    private final Map<Object, Object> forward = new IdentityHashMap<>();
    private final Map<Object, Object> backward = new IdentityHashMap<>();

    private Isomorphism() {}

    /** Throws an AssertionError naming the first difference. */
    static void check(PrimFunc a, PrimFunc b) {
        new Isomorphism().same(a, b, "func");
    }

    private void same(Object a, Object b, String path) {
        if (a == null || b == null) {
            if (a != b) fail(path, a, b);
            return;
        }
        if (a.getClass() != b.getClass())
            fail(path, a.getClass().getSimpleName(), b.getClass().getSimpleName());
        if (a instanceof Var || a instanceof Buffer || a instanceof Reducer) {
            Object mapped = forward.get(a);
            Object mappedBack = backward.get(b);
            if (mapped != null || mappedBack != null) {
                if (mapped != b || mappedBack != a) fail(path + " (identity)", a, b);
                return;
            }
            forward.put(a, b);
            backward.put(b, a);
            definition(a, b, path);
            return;
        }
        if (a instanceof Record) {
            for (RecordComponent c : a.getClass().getRecordComponents()) {
                same(get(c, a), get(c, b), path + "." + c.getName());
            }
            return;
        }
        if (a instanceof List<?> la) {
            List<?> lb = (List<?>) b;
            if (la.size() != lb.size()) fail(path + ".size", la.size(), lb.size());
            for (int i = 0; i < la.size(); i++) same(la.get(i), lb.get(i), path + "[" + i + "]");
            return;
        }
        if (a instanceof Double da) {
            if (Double.doubleToRawLongBits(da) != Double.doubleToRawLongBits((Double) b)) fail(path, a, b);
            return;
        }
        if (!Objects.equals(a, b)) fail(path, a, b);
    }

    private void definition(Object a, Object b, String path) {
        switch (a) {
            case IterVar x -> {
                IterVar y = (IterVar) b;
                same(x.name(), y.name(), path + ".name");
                same(x.kind(), y.kind(), path + ".kind");
                same(x.dom(), y.dom(), path + ".dom");
            }
            case Var x -> {
                same(x.name(), ((Var) b).name(), path + ".name");
                same(x.dtype(), ((Var) b).dtype(), path + ".dtype");
            }
            case Buffer x -> {
                Buffer y = (Buffer) b;
                same(x.name(), y.name(), path + ".name");
                same(x.dtype(), y.dtype(), path + ".dtype");
                same(x.scope(), y.scope(), path + ".scope");
                same(x.shape(), y.shape(), path + ".shape");
                same(x.strides(), y.strides(), path + ".strides");
                same(x.isView(), y.isView(), path + ".isView");
                if (x.isView()) same(x.base(), y.base(), path + ".base");
            }
            case Reducer x -> {
                for (RecordComponent c : Reducer.class.getRecordComponents()) {
                    same(get(c, x), get(c, b), path + "." + c.getName());
                }
            }
            default -> throw new IllegalStateException(a.getClass().toString());
        }
    }

    private static Object get(RecordComponent c, Object o) {
        try {
            return c.getAccessor().invoke(o);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void fail(String path, Object a, Object b) {
        throw new AssertionError("programs differ at " + path + ": " + a + " vs " + b);
    }
}
