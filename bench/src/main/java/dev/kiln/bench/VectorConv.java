package dev.kiln.bench;

import dev.kiln.ir.KilnException;
import java.util.concurrent.ForkJoinPool;
import java.util.stream.IntStream;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The plain-Java direct convolution baseline on the Vector API: float32, NHWC input, HWIO weights,
 * stride 1, zero padding, {@code out[n, y, x, o] = sum_{r, s, c} in[n, y + r - pad, x + s - pad, c] *
 * w[r, s, c, o]}. The register tile is {@link #TILE_X} output pixels of a row times 4 vectors of
 * output channels (16 {@code FloatVector} locals): per input channel it loads 4 weight vectors and
 * broadcasts 4 input values for 16 FMAs. Tiles whose window stays inside the image run without any
 * test; the tiles at the left and right border test each pixel. Output rows (over the batch) run in
 * parallel on the given pool. Needs the output width a multiple of {@link #TILE_X} and the output
 * channels a multiple of 4 vectors; anything else is a {@link KilnException}.
 */
public final class VectorConv {
    private VectorConv() {}

    static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    static final int L = S.length();
    /** Output pixels per register tile. */
    public static final int TILE_X = 4;
    /** Output channels per register tile: four vectors. */
    public static final int TILE_O = 4 * L;

    /** The shape of one convolution: batch, input height/width/channels, output channels, kernel, padding. */
    public record Shape(int n, int h, int w, int ci, int co, int kh, int kw, int pad) {
        public int oh() {
            return h + 2 * pad - kh + 1;
        }

        public int ow() {
            return w + 2 * pad - kw + 1;
        }
    }

    /** Runs the convolution {@code s} of {@code in} with {@code w} into {@code out} on {@code pool}. */
    public static void conv2d(float[] in, float[] w, float[] out, Shape s, ForkJoinPool pool) {
        check(in, w, out, s);
        int rows = s.n() * s.oh();
        pool.submit(() -> IntStream.range(0, rows).parallel().forEach(r -> row(in, w, out, s, r / s.oh(), r % s.oh())))
                .join();
    }

    private static void row(float[] in, float[] w, float[] out, Shape s, int b, int y) {
        int ow = s.ow();
        for (int ob = 0; ob < s.co(); ob += TILE_O) {
            for (int x0 = 0; x0 < ow; x0 += TILE_X) {
                boolean inside = x0 - s.pad() >= 0 && x0 + TILE_X - 1 + s.kw() - 1 - s.pad() < s.w();
                tile(in, w, out, s, b, y, x0, ob, inside);
            }
        }
    }

    /** One 4-pixel x 4-vector tile of output row {@code y} of image {@code b}. */
    private static void tile(
            float[] in, float[] w, float[] out, Shape s, int b, int y, int x0, int ob, boolean inside) {
        FloatVector z = FloatVector.zero(S);
        FloatVector c00 = z, c01 = z, c02 = z, c03 = z, c10 = z, c11 = z, c12 = z, c13 = z;
        FloatVector c20 = z, c21 = z, c22 = z, c23 = z, c30 = z, c31 = z, c32 = z, c33 = z;
        int ci = s.ci(), co = s.co(), width = s.w();
        for (int r = 0; r < s.kh(); r++) {
            int iy = y + r - s.pad();
            if (iy < 0 || iy >= s.h()) continue;
            int rowBase = (b * s.h() + iy) * width;
            for (int q = 0; q < s.kw(); q++) {
                int ix = x0 + q - s.pad();
                int i0 = (rowBase + ix) * ci, i1 = i0 + ci, i2 = i1 + ci, i3 = i2 + ci;
                boolean v0 = inside || (ix >= 0 && ix < width);
                boolean v1 = inside || (ix + 1 >= 0 && ix + 1 < width);
                boolean v2 = inside || (ix + 2 >= 0 && ix + 2 < width);
                boolean v3 = inside || (ix + 3 >= 0 && ix + 3 < width);
                int wo = (r * s.kw() + q) * ci * co + ob;
                if (inside) {
                    for (int c = 0; c < ci; c++, wo += co) {
                        FloatVector w0 = FloatVector.fromArray(S, w, wo);
                        FloatVector w1 = FloatVector.fromArray(S, w, wo + L);
                        FloatVector w2 = FloatVector.fromArray(S, w, wo + 2 * L);
                        FloatVector w3 = FloatVector.fromArray(S, w, wo + 3 * L);
                        FloatVector x = FloatVector.broadcast(S, in[i0 + c]);
                        c00 = x.fma(w0, c00);
                        c01 = x.fma(w1, c01);
                        c02 = x.fma(w2, c02);
                        c03 = x.fma(w3, c03);
                        x = FloatVector.broadcast(S, in[i1 + c]);
                        c10 = x.fma(w0, c10);
                        c11 = x.fma(w1, c11);
                        c12 = x.fma(w2, c12);
                        c13 = x.fma(w3, c13);
                        x = FloatVector.broadcast(S, in[i2 + c]);
                        c20 = x.fma(w0, c20);
                        c21 = x.fma(w1, c21);
                        c22 = x.fma(w2, c22);
                        c23 = x.fma(w3, c23);
                        x = FloatVector.broadcast(S, in[i3 + c]);
                        c30 = x.fma(w0, c30);
                        c31 = x.fma(w1, c31);
                        c32 = x.fma(w2, c32);
                        c33 = x.fma(w3, c33);
                    }
                } else {
                    // a border tile: pixels outside the image read as zero
                    for (int c = 0; c < ci; c++, wo += co) {
                        FloatVector w0 = FloatVector.fromArray(S, w, wo);
                        FloatVector w1 = FloatVector.fromArray(S, w, wo + L);
                        FloatVector w2 = FloatVector.fromArray(S, w, wo + 2 * L);
                        FloatVector w3 = FloatVector.fromArray(S, w, wo + 3 * L);
                        if (v0) {
                            FloatVector x = FloatVector.broadcast(S, in[i0 + c]);
                            c00 = x.fma(w0, c00);
                            c01 = x.fma(w1, c01);
                            c02 = x.fma(w2, c02);
                            c03 = x.fma(w3, c03);
                        }
                        if (v1) {
                            FloatVector x = FloatVector.broadcast(S, in[i1 + c]);
                            c10 = x.fma(w0, c10);
                            c11 = x.fma(w1, c11);
                            c12 = x.fma(w2, c12);
                            c13 = x.fma(w3, c13);
                        }
                        if (v2) {
                            FloatVector x = FloatVector.broadcast(S, in[i2 + c]);
                            c20 = x.fma(w0, c20);
                            c21 = x.fma(w1, c21);
                            c22 = x.fma(w2, c22);
                            c23 = x.fma(w3, c23);
                        }
                        if (v3) {
                            FloatVector x = FloatVector.broadcast(S, in[i3 + c]);
                            c30 = x.fma(w0, c30);
                            c31 = x.fma(w1, c31);
                            c32 = x.fma(w2, c32);
                            c33 = x.fma(w3, c33);
                        }
                    }
                }
            }
        }
        int o = ((b * s.oh() + y) * s.ow() + x0) * co + ob;
        c00.intoArray(out, o);
        c01.intoArray(out, o + L);
        c02.intoArray(out, o + 2 * L);
        c03.intoArray(out, o + 3 * L);
        o += co;
        c10.intoArray(out, o);
        c11.intoArray(out, o + L);
        c12.intoArray(out, o + 2 * L);
        c13.intoArray(out, o + 3 * L);
        o += co;
        c20.intoArray(out, o);
        c21.intoArray(out, o + L);
        c22.intoArray(out, o + 2 * L);
        c23.intoArray(out, o + 3 * L);
        o += co;
        c30.intoArray(out, o);
        c31.intoArray(out, o + L);
        c32.intoArray(out, o + 2 * L);
        c33.intoArray(out, o + 3 * L);
    }

    private static void check(float[] in, float[] w, float[] out, Shape s) {
        if (s.n() <= 0
                || s.h() <= 0
                || s.w() <= 0
                || s.ci() <= 0
                || s.co() <= 0
                || s.kh() <= 0
                || s.kw() <= 0
                || s.pad() < 0
                || s.oh() <= 0
                || s.ow() <= 0) {
            throw new KilnException("VectorConv: bad shape " + s);
        }
        if (s.ow() % TILE_X != 0) {
            throw new KilnException("VectorConv: output width " + s.ow() + " is not a multiple of " + TILE_X);
        }
        if (s.co() % TILE_O != 0) {
            throw new KilnException("VectorConv: output channels " + s.co() + " are not a multiple of " + TILE_O
                    + " (four " + S + " vectors)");
        }
        long nin = (long) s.n() * s.h() * s.w() * s.ci(), nw = (long) s.kh() * s.kw() * s.ci() * s.co();
        long nout = (long) s.n() * s.oh() * s.ow() * s.co();
        if (in.length < nin || w.length < nw || out.length < nout) {
            throw new KilnException("VectorConv: arrays too short for " + s + " (input " + in.length + " of " + nin
                    + ", weight " + w.length + " of " + nw + ", output " + out.length + " of " + nout + ")");
        }
    }
}
