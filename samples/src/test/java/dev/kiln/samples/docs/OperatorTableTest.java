package dev.kiln.samples.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Operator;
import dev.kiln.te.Tensor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class OperatorTableTest {

    @Test
    void theCommittedTableIsWhatTheCodeGenerates() throws IOException {
        Path committed = Path.of("..", "docs", "OPERATORS.md");
        assertThat(committed).as("docs/OPERATORS.md").exists();
        String actual = Files.readString(committed, StandardCharsets.UTF_8);
        assertThat(actual)
                .as(
                        "docs/OPERATORS.md is stale (an operator or its @Operator description changed):"
                                + " run `%s` and commit the file",
                        OperatorTable.COMMAND)
                .isEqualTo(OperatorTable.render());
    }

    @Test
    void theTableListsTheLibraryAndTheGraphOpsWithParameterNames() {
        String table = OperatorTable.render();
        assertThat(table)
                .contains("| `matmul` | `matmul(Tensor a, Tensor b)`<br>")
                .contains("`reshape(Tensor x, long... newShape)`")
                .contains("| `Conv2d` | `Conv2d(String layout, List<Long> strides, ");
        // every public class of dev.kiln.nn with an operator has a section, every graph op a row
        assertThat(OperatorCatalog.library())
                .extracting(OperatorCatalog.Entry::owner)
                .contains("Linalg", "Conv");
        assertThat(OperatorCatalog.graphOps()).hasSize(dev.kiln.graph.Op.class.getPermittedSubclasses().length);
    }

    @Test
    void anOperatorWithoutADescriptionIsNamed() {
        assertThatThrownBy(() -> OperatorCatalog.library(List.of(Undescribed.class)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("Undescribed.twice")
                .hasMessageContaining("none of its 2 public overloads carries @Operator");
        assertThatThrownBy(() -> OperatorCatalog.library(List.of(DescribedTwice.class)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("DescribedTwice.op: 2 overloads carry @Operator");
        assertThatThrownBy(() -> OperatorCatalog.library(List.of(DescribedHelper.class)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("DescribedHelper.helper, which is not a public static method");
        assertThat(OperatorCatalog.library(List.of(Linalg.class)))
                .allSatisfy(e -> assertThat(e.summary()).isNotBlank());
    }

    public static final class Undescribed {
        public static Tensor twice(Tensor x) {
            return x;
        }

        public static Tensor twice(Tensor x, int times) {
            return x;
        }
    }

    public static final class DescribedTwice {
        @Operator("one")
        public static Tensor op(Tensor x) {
            return x;
        }

        @Operator("two")
        public static Tensor op(Tensor x, int y) {
            return x;
        }
    }

    public static final class DescribedHelper {
        @Operator("not an operator")
        static long helper() {
            return 0;
        }
    }
}
