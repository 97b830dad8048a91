package dev.kiln.autoschedule.feature;

import dev.kiln.ir.KilnException;
import java.util.Arrays;
import java.util.List;

/**
 * The features of one program: one row of {@link FeatureLayout#LENGTH} numbers per statement
 * (per buffer written, in the order of the first store), stored row after row in one array, and
 * the names of the buffers. A program that could not be lowered has no rows; the cost model
 * ranks it below every other ({@link #isEmpty()}).
 *
 * @param statements the buffer each row describes
 * @param values     {@code statements.size() * LENGTH} numbers
 */
public record ProgramFeatures(List<String> statements, float[] values) {
    /** The features of a program that could not be lowered. */
    public static final ProgramFeatures EMPTY = new ProgramFeatures(List.of(), new float[0]);

    public ProgramFeatures {
        statements = List.copyOf(statements);
        if (values.length != statements.size() * FeatureLayout.LENGTH) {
            throw new KilnException("program features: " + values.length + " numbers for " + statements.size()
                    + " statements of " + FeatureLayout.LENGTH);
        }
    }

    /** The number of rows (statements). */
    public int rows() {
        return statements.size();
    }

    public boolean isEmpty() {
        return statements.isEmpty();
    }

    /** Entry {@code feature} of row {@code row}. */
    public float get(int row, int feature) {
        return values[row * FeatureLayout.LENGTH + feature];
    }

    /** A copy of row {@code row}. */
    public float[] row(int row) {
        return Arrays.copyOfRange(values, row * FeatureLayout.LENGTH, (row + 1) * FeatureLayout.LENGTH);
    }

    /** The row of the statement that writes {@code buffer}; throws if there is none. */
    public float[] row(String buffer) {
        int i = statements.indexOf(buffer);
        if (i < 0) throw new KilnException("no statement writes buffer '" + buffer + "'; statements: " + statements);
        return row(i);
    }

    /** The values are shared, not copied: callers must not change them. */
    @Override
    public float[] values() {
        return values;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ProgramFeatures p && p.statements.equals(statements) && Arrays.equals(p.values, values);
    }

    @Override
    public int hashCode() {
        return statements.hashCode() * 31 + Arrays.hashCode(values);
    }

    @Override
    public String toString() {
        return "ProgramFeatures" + statements;
    }
}
