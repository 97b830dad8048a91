package dev.kiln.samples.docs;

import dev.kiln.graph.Op;
import dev.kiln.ir.KilnException;
import dev.kiln.nn.Operator;
import dev.kiln.te.Tensor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The operators of Kiln, found by reflection: every public static method of {@code dev.kiln.nn} that
 * returns a tensor (grouped by name; exactly one overload carries {@link Operator}), and every graph op
 * (the records permitted by {@link Op}, each carrying {@link Operator}). A missing or doubled
 * description is a {@link KilnException} naming the method or record, so a new operator cannot be
 * left out of docs/OPERATORS.md.
 */
public final class OperatorCatalog {
    private OperatorCatalog() {}

    /** One operator: its owner (class or interface), name, every signature, and what it computes. */
    public record Entry(String owner, String name, List<String> signatures, String summary) {
        public Entry {
            signatures = List.copyOf(signatures);
        }
    }

    /** The library's operators, by class then name. */
    public static List<Entry> library() {
        return library(nnClasses());
    }

    /** The operators among {@code classes}' public static tensor-returning methods, by class then name. */
    public static List<Entry> library(List<Class<?>> classes) {
        List<Entry> entries = new ArrayList<>();
        for (Class<?> c : classes.stream()
                .sorted(Comparator.comparing(Class::getSimpleName))
                .toList()) {
            Map<String, List<Method>> byName = new TreeMap<>();
            for (Method m : c.getDeclaredMethods()) {
                boolean op = isOperatorMethod(m);
                if (m.isAnnotationPresent(Operator.class) && !op) {
                    throw new KilnException("@Operator on " + c.getSimpleName() + "." + m.getName()
                            + ", which is not a public static method returning Tensor or List<Tensor>");
                }
                if (op)
                    byName.computeIfAbsent(m.getName(), k -> new ArrayList<>()).add(m);
            }
            byName.forEach((name, overloads) -> entries.add(entry(c, name, overloads)));
        }
        return entries;
    }

    /** The graph ops: the records permitted by {@link Op}, by name. */
    public static List<Entry> graphOps() {
        List<Entry> entries = new ArrayList<>();
        for (Class<?> c : Op.class.getPermittedSubclasses()) {
            Operator op = c.getAnnotation(Operator.class);
            if (op == null) {
                throw new KilnException("graph op " + c.getSimpleName() + " carries no @Operator description");
            }
            String components = c.isRecord()
                    ? Arrays.stream(c.getRecordComponents())
                            .map(OperatorCatalog::component)
                            .collect(Collectors.joining(", "))
                    : "";
            String summary = op.value() + enumValues(c);
            entries.add(
                    new Entry("Op", c.getSimpleName(), List.of(c.getSimpleName() + "(" + components + ")"), summary));
        }
        entries.sort(Comparator.comparing(Entry::name));
        return entries;
    }

    private static boolean isOperatorMethod(Method m) {
        int mod = m.getModifiers();
        if (!Modifier.isPublic(mod) || !Modifier.isStatic(mod) || m.isSynthetic()) return false;
        Type r = m.getGenericReturnType();
        return r == Tensor.class
                || (r instanceof ParameterizedType p
                        && p.getRawType() == List.class
                        && p.getActualTypeArguments()[0] == Tensor.class);
    }

    private static Entry entry(Class<?> c, String name, List<Method> overloads) {
        List<Method> described = overloads.stream()
                .filter(m -> m.isAnnotationPresent(Operator.class))
                .toList();
        String where = c.getSimpleName() + "." + name;
        if (described.isEmpty()) {
            throw new KilnException("operator " + where + ": none of its " + overloads.size()
                    + " public overloads carries @Operator (put a one-line description on one of them)");
        }
        if (described.size() > 1) {
            throw new KilnException("operator " + where + ": " + described.size()
                    + " overloads carry @Operator; exactly one should (the table has one row per operator)");
        }
        List<String> signatures = overloads.stream()
                .map(OperatorCatalog::signature)
                .sorted(Comparator.comparingInt(String::length).thenComparing(Comparator.naturalOrder()))
                .toList();
        return new Entry(
                c.getSimpleName(),
                name,
                signatures,
                described.get(0).getAnnotation(Operator.class).value());
    }

    /** {@code name(Tensor x, long... shape)}, with {@code -> List<Tensor>} when it returns several tensors. */
    static String signature(Method m) {
        Parameter[] ps = m.getParameters();
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < ps.length; i++) {
            String type = typeName(ps[i].getParameterizedType());
            if (m.isVarArgs() && i == ps.length - 1) type = type.substring(0, type.length() - 2) + "...";
            parts.add(type + " " + ps[i].getName());
        }
        String ret = m.getGenericReturnType() == Tensor.class ? "" : " -> " + typeName(m.getGenericReturnType());
        return m.getName() + "(" + String.join(", ", parts) + ")" + ret;
    }

    private static String component(RecordComponent rc) {
        return typeName(rc.getGenericType()) + " " + rc.getName();
    }

    /** The constants of an enum-typed record component: "; op: ADD, SUBTRACT, ...". */
    private static String enumValues(Class<?> c) {
        if (!c.isRecord()) return "";
        StringBuilder sb = new StringBuilder();
        for (RecordComponent rc : c.getRecordComponents()) {
            if (rc.getType().isEnum()) {
                String values = Arrays.stream(rc.getType().getEnumConstants())
                        .map(e -> ((Enum<?>) e).name())
                        .collect(Collectors.joining(", "));
                sb.append(" `")
                        .append(rc.getName())
                        .append("`: ")
                        .append(values)
                        .append('.');
            }
        }
        return sb.toString();
    }

    static String typeName(Type t) {
        return switch (t) {
            case Class<?> c when c.isArray() -> typeName(c.getComponentType()) + "[]";
            case Class<?> c -> c.getSimpleName();
            case ParameterizedType p ->
                typeName(p.getRawType()) + "<"
                        + Arrays.stream(p.getActualTypeArguments())
                                .map(OperatorCatalog::typeName)
                                .collect(Collectors.joining(", "))
                        + ">";
            case GenericArrayType g -> typeName(g.getGenericComponentType()) + "[]";
            case WildcardType w ->
                w.getUpperBounds().length > 0 && w.getUpperBounds()[0] != Object.class
                        ? "? extends " + typeName(w.getUpperBounds()[0])
                        : "?";
            default -> t.getTypeName();
        };
    }

    /** The public top-level classes of {@code dev.kiln.nn}, read from the jar or folder that holds them. */
    static List<Class<?>> nnClasses() {
        String pkg = Operator.class.getPackageName();
        try {
            Path root = Path.of(Operator.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            if (Files.isDirectory(root)) return classesIn(root.resolve(pkg.replace('.', '/')), pkg);
            try (FileSystem jar = FileSystems.newFileSystem(root)) {
                return classesIn(jar.getPath(pkg.replace('.', '/')), pkg);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading the classes of " + pkg, e);
        } catch (URISyntaxException e) {
            throw new KilnException("cannot locate the classes of " + pkg + ": " + e.getMessage());
        }
    }

    private static List<Class<?>> classesIn(Path dir, String pkg) throws IOException {
        List<Class<?>> classes = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (String f : files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".class") && !n.contains("$"))
                    .sorted()
                    .toList()) {
                String name = pkg + "." + f.substring(0, f.length() - ".class".length());
                try {
                    Class<?> c = Class.forName(name, false, Operator.class.getClassLoader());
                    if (Modifier.isPublic(c.getModifiers()) && !c.isAnnotation()) classes.add(c);
                } catch (ClassNotFoundException e) {
                    throw new KilnException("class " + name + " listed in " + dir + " cannot be loaded");
                }
            }
        }
        return classes;
    }
}
