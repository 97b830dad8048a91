package dev.kiln.runtime;

import dev.kiln.ir.DType;
import java.util.Arrays;
import java.util.Locale;

/**
 * The result of comparing an array against an expected one ({@link NDArray#compareTo}). An element
 * differs when {@code |actual - expected| > atol + rtol * |expected|}; NaN against NaN counts as
 * equal, NaN against a number differs, and equal infinities are equal.
 *
 * @param ok           whether no element differs
 * @param mismatches   how many elements differ
 * @param total        how many elements were compared
 * @param worstIndex   multi-index of the worst element: the mismatch that exceeds its tolerance the
 *                     most, or the element with the largest absolute error when all match (empty
 *                     for an empty array)
 * @param actual       the actual value at {@code worstIndex}
 * @param expected     the expected value at {@code worstIndex}
 * @param maxAbsError  largest absolute error over all elements (infinite for NaN against a number)
 * @param maxRelError  largest {@code |a - e| / |e|} over the elements with {@code e != 0}
 * @param rtol         relative tolerance used
 * @param atol         absolute tolerance used
 * @param dtype        element type, used to print values
 */
public record Comparison(
        boolean ok,
        long mismatches,
        long total,
        long[] worstIndex,
        double actual,
        double expected,
        double maxAbsError,
        double maxRelError,
        double rtol,
        double atol,
        DType dtype) {

    public Comparison {
        worstIndex = worstIndex.clone();
    }

    @Override
    public long[] worstIndex() {
        return worstIndex.clone();
    }

    /**
     * One line for a test failure, e.g. {@code 3 of 4096 elements differ; worst at [1, 7]: got 0.51,
     * expected 0.49 (abs 0.02, rel 0.04); max abs 0.02, max rel 0.04 (rtol 1e-05, atol 1e-06)}.
     */
    public String report() {
        String tol = " (rtol " + num(rtol) + ", atol " + num(atol) + ")";
        String maxes = "max abs " + num(maxAbsError) + ", max rel " + num(maxRelError);
        if (total == 0) return "no elements to compare" + tol;
        String at = " at " + Arrays.toString(worstIndex) + ": got " + value(actual) + ", expected " + value(expected)
                + " (abs " + num(absError(actual, expected)) + ", rel " + num(relError(actual, expected)) + ")";
        if (ok) return "all " + total + " elements match; largest error" + at + "; " + maxes + tol;
        return mismatches + " of " + total + " elements differ; worst" + at + "; " + maxes + tol;
    }

    @Override
    public String toString() {
        return report();
    }

    /** Compares element by element; the caller has checked dtypes and shapes. */
    static Comparison of(NDArray actual, NDArray expected, double rtol, double atol) {
        long mismatches = 0;
        long worst = -1;
        double worstExcess = Double.NEGATIVE_INFINITY;
        long largest = actual.numElements() > 0 ? 0 : -1;
        double maxAbs = 0;
        double maxRel = 0;
        for (long i = 0; i < actual.numElements(); i++) {
            double a = actual.getDoubleFlat(i);
            double e = expected.getDoubleFlat(i);
            double abs = absError(a, e);
            if (Double.isNaN(abs)) abs = Double.POSITIVE_INFINITY;
            if (abs > maxAbs) {
                maxAbs = abs;
                largest = i;
            }
            if (e != 0 && !Double.isNaN(e)) maxRel = Math.max(maxRel, relError(a, e));
            double excess = abs - (atol + rtol * Math.abs(e));
            if (abs > 0 && (excess > 0 || Double.isNaN(excess))) {
                mismatches++;
                if (Double.isNaN(excess)) excess = Double.POSITIVE_INFINITY;
                if (worst < 0 || excess > worstExcess) {
                    worst = i;
                    worstExcess = excess;
                }
            }
        }
        long at = mismatches > 0 ? worst : largest;
        long[] idx = at >= 0 ? actual.unravel(at) : new long[0];
        double av = at >= 0 ? actual.getDoubleFlat(at) : 0;
        double ev = at >= 0 ? expected.getDoubleFlat(at) : 0;
        return new Comparison(
                mismatches == 0,
                mismatches,
                actual.numElements(),
                idx,
                av,
                ev,
                maxAbs,
                maxRel,
                rtol,
                atol,
                actual.dtype());
    }

    static double absError(double a, double e) {
        if (Double.isNaN(a) && Double.isNaN(e)) return 0;
        if (a == e) return 0; // equal infinities too
        return Math.abs(a - e); // NaN or infinite when one side is
    }

    static double relError(double a, double e) {
        double abs = absError(a, e);
        if (abs == 0) return 0;
        if (Double.isNaN(abs)) return Double.POSITIVE_INFINITY;
        return e == 0 ? Double.POSITIVE_INFINITY : abs / Math.abs(e);
    }

    private String value(double v) {
        if (dtype.isFloat()) {
            return dtype == DType.FLOAT64 ? Double.toString(v) : Float.toString((float) v);
        }
        if (dtype.isBool()) return v != 0 ? "true" : "false";
        return Long.toString((long) v);
    }

    /** A short number: 0.02, 1e-05, 3.46e+04, inf. */
    static String num(double v) {
        if (v == 0) return "0";
        if (Double.isNaN(v)) return "nan";
        if (Double.isInfinite(v)) return v > 0 ? "inf" : "-inf";
        String s = String.format(Locale.ROOT, "%.3g", v);
        int e = s.indexOf('e');
        String mant = e < 0 ? s : s.substring(0, e);
        String exp = e < 0 ? "" : s.substring(e);
        if (mant.contains(".")) {
            mant = mant.replaceAll("0+$", "");
            if (mant.endsWith(".")) mant = mant.substring(0, mant.length() - 1);
        }
        return mant + exp;
    }
}
