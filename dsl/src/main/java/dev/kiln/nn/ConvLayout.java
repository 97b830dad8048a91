package dev.kiln.nn;

import dev.kiln.ir.KilnException;
import dev.kiln.te.Tensor;

/**
 * Where the axes of a convolution live, parsed from layout strings such as {@code "NHWC"} /
 * {@code "HWIO"}: the data layout has one batch axis {@code N}, one channel axis {@code C} and the
 * spatial axes (any other letters, e.g. D, H, W, L); the kernel layout has an output-channel axis
 * {@code O}, an input-channel axis {@code I} and the same spatial letters in any order. Spatial
 * axis {@code i} is the {@code i}-th spatial letter of the data layout.
 */
final class ConvLayout {
    final String op;
    final String data;
    final String kernel;
    final int batch;
    final int channel;
    final int kernelOut;
    final int kernelIn;
    final int[] dataSpatial;
    final int[] kernelSpatial;

    private ConvLayout(String op, String data, String kernel) {
        this.op = op;
        this.data = data;
        this.kernel = kernel;
        this.batch = data.indexOf('N');
        this.channel = data.indexOf('C');
        if (batch < 0 || channel < 0 || distinct(data) != data.length() || data.length() < 3) {
            throw new KilnException(op + ": data layout '" + data
                    + "' needs one N, one C and at least one spatial letter, each at most once");
        }
        int s = data.length() - 2;
        this.dataSpatial = new int[s];
        this.kernelSpatial = new int[s];
        this.kernelOut = kernel.indexOf('O');
        this.kernelIn = kernel.indexOf('I');
        if (kernelOut < 0 || kernelIn < 0 || distinct(kernel) != kernel.length() || kernel.length() != data.length()) {
            throw new KilnException(op + ": kernel layout '" + kernel
                    + "' needs one O, one I and the spatial letters of '" + data + "'");
        }
        int i = 0;
        for (int d = 0; d < data.length(); d++) {
            char c = data.charAt(d);
            if (c == 'N' || c == 'C') continue;
            int k = kernel.indexOf(c);
            if (k < 0) {
                throw new KilnException(
                        op + ": kernel layout '" + kernel + "' lacks the spatial axis " + c + " of '" + data + "'");
            }
            dataSpatial[i] = d;
            kernelSpatial[i] = k;
            i++;
        }
    }

    static ConvLayout parse(String op, String data, String kernel) {
        return new ConvLayout(op, data, kernel);
    }

    private static int distinct(String s) {
        return (int) s.chars().distinct().count();
    }

    int spatialRank() {
        return dataSpatial.length;
    }

    /** The letter of spatial axis {@code i}. */
    String spatialName(int i) {
        return String.valueOf(data.charAt(dataSpatial[i]));
    }

    String[] spatialNames() {
        String[] n = new String[spatialRank()];
        for (int i = 0; i < n.length; i++) n[i] = spatialName(i);
        return n;
    }

    void requireRanks(Tensor x, Tensor w) {
        ConvChecks.requireRank(op, "input", x, data);
        ConvChecks.requireRank(op, "weight", w, kernel);
    }
}
