package dev.kiln.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class NDArrayTest {

    @Test
    void float32RoundTripIsExactAndAligned() {
        SplittableRandom r = new SplittableRandom(1);
        for (long[] shape : new long[][] {{7}, {3, 5}, {2, 3, 4}, {}}) {
            int n = 1;
            for (long s : shape) n *= (int) s;
            float[] data = new float[n];
            for (int i = 0; i < n; i++) data[i] = (float) (r.nextDouble() * 200 - 100);
            try (NDArray a = NDArray.fromFloats(data, shape)) {
                assertEquals(DType.FLOAT32, a.dtype());
                assertArrayEquals(shape, a.shape());
                assertArrayEquals(NDArray.rowMajorStrides(shape), a.strides());
                assertTrue(a.isCompact());
                assertEquals(0, a.segment().address() % NDArray.ALIGNMENT);
                assertArrayEquals(data, a.toFloatArray());
                for (int i = 0; i < n; i++) assertEquals(data[i], a.getDouble(a.unravel(i)));
            }
        }
    }

    @Test
    void float64Int32Int64RoundTrips() {
        double[] d = {1.5, -2.25, 1e300, Double.MIN_VALUE, -0.0, Double.NaN};
        try (NDArray a = NDArray.fromDoubles(d, 2, 3)) {
            assertArrayEquals(d, a.toDoubleArray());
            assertEquals(1e300, a.getDouble(0, 2));
        }
        int[] i = {Integer.MIN_VALUE, -1, 0, 7, Integer.MAX_VALUE};
        try (NDArray a = NDArray.fromInts(i, 5)) {
            assertArrayEquals(new long[] {Integer.MIN_VALUE, -1, 0, 7, Integer.MAX_VALUE}, a.toLongArray());
            assertEquals(DType.INT32, a.dtype());
        }
        long[] l = {Long.MIN_VALUE, -3, Long.MAX_VALUE, 1L << 40};
        try (NDArray a = NDArray.fromLongs(l, 2, 2)) {
            assertArrayEquals(l, a.toLongArray());
            assertEquals(Long.MAX_VALUE, a.getLong(1, 0));
        }
    }

    @Test
    void byteTypesKeepTheirRange() {
        byte[] raw = {-128, -1, 0, 1, 127};
        try (NDArray s = NDArray.fromBytes(DType.INT8, raw, 5);
                NDArray u = NDArray.fromBytes(DType.UINT8, raw, 5)) {
            assertArrayEquals(new long[] {-128, -1, 0, 1, 127}, s.toLongArray());
            assertArrayEquals(new long[] {128, 255, 0, 1, 127}, u.toLongArray());
        }
        try (NDArray b = NDArray.fromBytes(DType.BOOL, new byte[] {0, 1, 1}, 3)) {
            assertArrayEquals(new long[] {0, 1, 1}, b.toLongArray());
            assertEquals(1.0, b.getDouble(2));
        }
        assertThrows(KilnException.class, () -> NDArray.fromBytes(DType.BOOL, new byte[] {2}, 1));
        assertThrows(KilnException.class, () -> NDArray.fromBytes(DType.INT32, new byte[] {2}, 1));
    }

    @Test
    void integerTypesWrapOnSetLongAndSaturateOnSetDouble() {
        try (NDArray a = NDArray.allocate(DType.INT8, 1)) {
            a.setLong(200, 0);
            assertEquals(-56, a.getLong(0));
            a.setDouble(200.7, 0);
            assertEquals(127, a.getLong(0));
            a.setDouble(-3.9, 0);
            assertEquals(-3, a.getLong(0));
            a.setDouble(Double.NaN, 0);
            assertEquals(0, a.getLong(0));
        }
        try (NDArray a = NDArray.allocate(DType.UINT8, 1)) {
            a.setLong(-1, 0);
            assertEquals(255, a.getLong(0));
            a.setLong(256 + 17, 0);
            assertEquals(17, a.getLong(0));
            a.setDouble(-5, 0);
            assertEquals(0, a.getLong(0));
        }
        try (NDArray a = NDArray.allocate(DType.INT16, 1)) {
            a.setLong(40000, 0);
            assertEquals(40000 - 65536, a.getLong(0));
        }
        try (NDArray a = NDArray.allocate(DType.INT32, 1)) {
            a.setLong(1L << 32 | 5, 0);
            assertEquals(5, a.getLong(0));
            a.setDouble(1e12, 0);
            assertEquals(Integer.MAX_VALUE, a.getLong(0));
        }
        try (NDArray a = NDArray.allocate(DType.BOOL, 2)) {
            a.setLong(5, 0);
            a.setDouble(Double.NaN, 1);
            assertArrayEquals(new long[] {1, 1}, a.toLongArray());
            a.setDouble(0.0, 1);
            assertEquals(0, a.getLong(1));
        }
    }

    @Test
    void float16MatchesJavaConversionAndRoundsToNearestEven() {
        SplittableRandom r = new SplittableRandom(2);
        float[] data = new float[1000];
        for (int i = 0; i < data.length; i++)
            data[i] = (float) ((r.nextDouble() - 0.5) * Math.scalb(1.0, r.nextInt(-30, 20)));
        data[0] = 70000f; // overflows to infinity
        data[1] = 1e-8f; // subnormal range of float16
        data[2] = 2049f; // tie between 2048 and 2050: even is 2048
        data[3] = 2051f; // tie between 2050 and 2052: even is 2052
        data[4] = Float.NaN;
        try (NDArray a = NDArray.fromFloats(DType.FLOAT16, data, 10, 100)) {
            float[] back = a.toFloatArray();
            for (int i = 0; i < data.length; i++) {
                float expected = Float.float16ToFloat(Float.floatToFloat16(data[i]));
                assertEquals(expected, back[i], "element " + i + " from " + data[i]);
                assertEquals(Float.floatToFloat16(data[i]), a.segment().get(ValueLayout.JAVA_SHORT_UNALIGNED, 2L * i));
            }
            assertEquals(Float.POSITIVE_INFINITY, back[0]);
            assertEquals(2048f, back[2]);
            assertEquals(2052f, back[3]);
        }
        // Rounding directly from double: a value just above a float16 tie goes up.
        assertEquals(2050.0, Numerics.roundToFloat16(2049.0000001));
        assertEquals(65504.0, Numerics.roundToFloat16(65519.9));
        assertEquals(Double.POSITIVE_INFINITY, Numerics.roundToFloat16(65520.0));
    }

    @Test
    void bfloat16IsUpperHalfOfFloatRoundedToNearestEven() {
        SplittableRandom r = new SplittableRandom(3);
        float[] data = new float[1000];
        for (int i = 0; i < data.length; i++) data[i] = Float.intBitsToFloat(r.nextInt());
        data[0] = 1.0f + 0x1p-8f; // tie: 1 + 2^-8 -> 1.0 (even)
        data[1] = 1.0f + 3 * 0x1p-8f; // tie: -> 1 + 2^-6 (even)
        data[2] = 1.0f + 0x1p-8f + 0x1p-20f; // above the tie -> 1 + 2^-7
        try (NDArray a = NDArray.fromFloats(DType.BFLOAT16, data, data.length)) {
            for (int i = 0; i < data.length; i++) {
                short bits = a.segment().get(ValueLayout.JAVA_SHORT_UNALIGNED, 2L * i);
                float f = data[i];
                if (Float.isNaN(f)) {
                    assertTrue(Double.isNaN(a.getDoubleFlat(i)), "NaN stays NaN at " + i);
                    continue;
                }
                int b = Float.floatToRawIntBits(f);
                int up = (b >>> 16) & 0xFFFF;
                int low = b & 0xFFFF;
                if (low > 0x8000 || (low == 0x8000 && (up & 1) == 1)) up = (up + 1) & 0xFFFF;
                assertEquals((short) up, bits, "element " + i + " from " + f);
                assertEquals(Numerics.toBFloat16Bits(f), Numerics.toBFloat16Bits((double) f));
            }
            assertEquals(1.0, a.getDoubleFlat(0));
            assertEquals(1.0 + 0x1p-6, a.getDoubleFlat(1));
            assertEquals(1.0 + 0x1p-7, a.getDoubleFlat(2));
        }
    }

    @Test
    void integersConvertToHalfTypesWithOneRounding() {
        // 0x1810001 rounds through float32 to 0x1810000, a bfloat16 tie (-> 0x1800000); the true
        // value is above the tie and must round up to 0x1820000.
        assertEquals((double) 0x1820000, Numerics.intToFloat(DType.BFLOAT16, 0x1810001L));
        assertEquals((double) 0x1800000, Numerics.intToFloat(DType.BFLOAT16, 0x1810000L));
        // Same beyond 2^53, where going through double would lose the sticky bit.
        assertEquals(0x1p60 + 0x1p53, Numerics.intToFloat(DType.BFLOAT16, (1L << 60) + (1L << 52) + 1));
        assertEquals(Double.POSITIVE_INFINITY, Numerics.intToFloat(DType.FLOAT16, 70000));
        assertEquals(2048.0, Numerics.intToFloat(DType.FLOAT16, 2049));
        assertEquals(-2052.0, Numerics.intToFloat(DType.FLOAT16, -2051));
    }

    @Test
    void randomIsSeededInRangeAndNeverAllZero() {
        for (DType t : DType.values()) {
            try (NDArray a = NDArray.random(t, 42, 5, 37);
                    NDArray b = NDArray.random(t, 42, 5, 37);
                    NDArray c = NDArray.random(t, 43, 5, 37)) {
                assertTrue(a.compareTo(b, 0, 0).ok(), t + ": same seed, same values");
                assertFalse(a.compareTo(c, 0, 0).ok(), t + ": other seed, other values");
                double[] v = a.toDoubleArray();
                long nonZero = 0;
                for (double x : v) {
                    if (x != 0) nonZero++;
                    if (t.isFloat()) assertTrue(x >= -1 && x < 1, t + " value " + x);
                    else if (t.isBool()) assertTrue(x == 0 || x == 1);
                    else if (t.isUnsigned()) assertTrue(x >= 0 && x < 16);
                    else assertTrue(x >= -8 && x < 8, t + " value " + x);
                }
                assertTrue(nonZero > v.length / 3, t + " has mostly non-zero values");
            }
        }
        // A one-element bool or int array could draw 0: it is never all zero.
        for (long seed = 0; seed < 64; seed++) {
            try (NDArray b = NDArray.random(DType.BOOL, seed, 1);
                    NDArray i = NDArray.random(DType.INT8, seed, 1)) {
                assertEquals(1, b.getLong(0));
                assertNotEquals(0, i.getLong(0));
            }
        }
    }

    @Test
    void comparisonFindsTheWorstMismatch() {
        float[] e = new float[4096];
        SplittableRandom r = new SplittableRandom(4);
        for (int i = 0; i < e.length; i++) e[i] = (float) r.nextDouble(-1, 1);
        float[] a = e.clone();
        a[64 + 7] = e[64 + 7] + 0.02f; // [1, 7]
        a[100] = e[100] + 0.001f;
        a[4000] = e[4000] - 0.005f;
        try (NDArray actual = NDArray.fromFloats(a, 64, 64);
                NDArray expected = NDArray.fromFloats(e, 64, 64)) {
            Comparison c = actual.compareTo(expected, 1e-5, 1e-6);
            assertFalse(c.ok());
            assertEquals(3, c.mismatches());
            assertEquals(4096, c.total());
            assertArrayEquals(new long[] {1, 7}, c.worstIndex());
            assertEquals(a[71], c.actual(), 0);
            assertEquals(e[71], c.expected(), 0);
            assertEquals(0.02, c.maxAbsError(), 1e-6);
            String rep = c.report();
            assertTrue(rep.startsWith("3 of 4096 elements differ; worst at [1, 7]: got "), rep);
            assertTrue(rep.contains("(rtol 1e-05, atol 1e-06)"), rep);
            AssertionError err = assertThrows(AssertionError.class, () -> actual.assertClose(expected, 1e-5, 1e-6));
            assertEquals(rep, err.getMessage());
            // Loose enough tolerances accept it.
            assertTrue(actual.compareTo(expected, 0, 0.03).ok());
            actual.assertClose(expected, 0, 0.03);
        }
    }

    @Test
    void comparisonRelativeToleranceScalesWithExpected() {
        try (NDArray a = NDArray.fromDoubles(new double[] {1000.5, 0.5}, 2);
                NDArray e = NDArray.fromDoubles(new double[] {1000.0, 0.0}, 2)) {
            Comparison c = a.compareTo(e, 1e-3, 0.6);
            assertTrue(c.ok(), c.report());
            assertEquals(0.5 / 1000, c.maxRelError(), 1e-12);
            Comparison strict = a.compareTo(e, 1e-4, 0.1);
            assertEquals(2, strict.mismatches());
            assertArrayEquals(new long[] {1}, strict.worstIndex(), strict.report());
        }
    }

    @Test
    void nanRules() {
        try (NDArray a = NDArray.fromFloats(new float[] {Float.NaN, 1f, Float.NaN, Float.POSITIVE_INFINITY}, 4);
                NDArray e = NDArray.fromFloats(new float[] {Float.NaN, Float.NaN, 2f, Float.POSITIVE_INFINITY}, 4)) {
            Comparison c = a.compareTo(e, 1e-3, 1e-3);
            assertEquals(2, c.mismatches(), c.report());
            assertEquals(Double.POSITIVE_INFINITY, c.maxAbsError());
            long w = c.worstIndex()[0];
            assertTrue(w == 1 || w == 2, c.report());
        }
        try (NDArray a = NDArray.fromFloats(new float[] {Float.NaN, 3f}, 2);
                NDArray e = NDArray.fromFloats(new float[] {Float.NaN, 3f}, 2)) {
            assertTrue(a.compareTo(e, 0, 0).ok());
        }
    }

    @Test
    void comparisonNeedsSameShapeAndDtype() {
        try (NDArray a = NDArray.allocate(DType.FLOAT32, 4, 8);
                NDArray b = NDArray.allocate(DType.FLOAT32, 8, 4);
                NDArray c = NDArray.allocate(DType.FLOAT64, 4, 8)) {
            KilnException ex = assertThrows(KilnException.class, () -> a.compareTo(b, 0, 0));
            assertTrue(
                    ex.getMessage().contains("shapes differ") && ex.getMessage().contains("float32[8, 4]"),
                    ex.getMessage());
            AssertionError err = assertThrows(AssertionError.class, () -> a.assertClose(c, 0, 0));
            assertTrue(err.getMessage().contains("dtypes differ"), err.getMessage());
        }
    }

    @Test
    void stridedArraysReadInLogicalOrder() {
        try (NDArray t = NDArray.allocateStrided(DType.FLOAT32, new long[] {3, 5}, new long[] {1, 3})) {
            assertFalse(t.isCompact());
            for (long i = 0; i < 3; i++) for (long j = 0; j < 5; j++) t.setDouble(i * 10 + j, i, j);
            assertEquals(23.0, t.segment().get(ValueLayout.JAVA_FLOAT_UNALIGNED, 4L * (2 + 3 * 3)));
            float[] f = t.toFloatArray();
            assertEquals(4f, f[4]);
            assertEquals(14f, f[9]);
            assertEquals(21f, f[11]);
            try (NDArray c = t.copy()) {
                assertTrue(c.isCompact());
                assertArrayEquals(f, c.toFloatArray());
                assertTrue(c.compareTo(t, 0, 0).ok());
            }
        }
        Buffer b = new Buffer(
                "B",
                DType.INT16,
                List.of(dev.kiln.ir.IntImm.i32(4), dev.kiln.ir.IntImm.i32(2)),
                List.of(dev.kiln.ir.IntImm.i32(1), dev.kiln.ir.IntImm.i32(6)),
                MemoryScope.GLOBAL);
        try (NDArray a = NDArray.allocate(b)) {
            assertArrayEquals(new long[] {1, 6}, a.strides());
            assertEquals(2L * (3 + 6 + 1), a.segment().byteSize());
        }
    }

    @Test
    void indexErrorsNameTheDimension() {
        try (NDArray a = NDArray.allocate(DType.FLOAT32, 4, 8)) {
            KilnException ex = assertThrows(KilnException.class, () -> a.getDouble(2, 8));
            assertTrue(ex.getMessage().contains("dimension 1 index 8 is outside [0, 8)"), ex.getMessage());
            assertThrows(KilnException.class, () -> a.setDouble(1, 1));
            assertThrows(KilnException.class, () -> a.getDoubleFlat(32));
        }
        assertThrows(KilnException.class, () -> NDArray.fromFloats(new float[5], 2, 3));
        assertThrows(KilnException.class, () -> NDArray.allocate(DType.FLOAT32, 2, -1));
    }

    @Test
    void wrapBorrowsMemoryAndClosingFreesOwnedMemory() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(6 * 8);
            NDArray w = NDArray.wrap(seg, DType.INT64, new long[] {2, 3}, new long[] {3, 1});
            w.setLong(9, 1, 2);
            w.close();
            assertEquals(9, seg.getAtIndex(ValueLayout.JAVA_LONG, 5));
            assertThrows(KilnException.class, () -> NDArray.wrap(seg, DType.INT64, new long[] {7}, new long[] {1}));
        }
        NDArray a = NDArray.allocate(DType.FLOAT32, 3);
        a.close();
        a.close();
        KilnException closed = assertThrows(KilnException.class, () -> a.getDouble(0));
        assertTrue(
                closed.getMessage().contains("float32[3]")
                        && closed.getMessage().contains("closed"),
                closed.getMessage());
    }

    @Test
    void printing() {
        try (NDArray a = NDArray.fromFloats(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
                NDArray b = NDArray.fromBytes(DType.BOOL, new byte[] {1, 0}, 2)) {
            assertEquals("NDArray(float32[2, 3])", a.toString());
            assertEquals("float32[2, 3] [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]", a.format(100));
            assertEquals("float32[2, 3] [[1.0, 2.0, 3.0], [4.0, ...]]", a.format(4));
            assertEquals("bool[2] [true, false]", b.format(10));
        }
    }
}
