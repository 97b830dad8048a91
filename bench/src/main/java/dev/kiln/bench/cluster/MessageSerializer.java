package dev.kiln.bench.cluster;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import java.io.IOException;
import java.io.NotSerializableException;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.SerializerWithStringManifest;

/**
 * Pekko's serializer for {@link ClusterMessage}s: each record as JSON (Jackson data binding), its manifest the
 * record's simple name, read back only into the classes listed here (no class named by the sender is ever loaded).
 */
public final class MessageSerializer extends SerializerWithStringManifest {
    private static final Map<String, Class<?>> CLASSES = Stream.of(
                    Wire.RequestWork.class,
                    Wire.Work.class,
                    Wire.NoWork.class,
                    Wire.Result.class,
                    Wire.FetchWorkload.class,
                    Wire.WorkloadChunk.class,
                    Wire.WorkAvailable.class)
            .collect(Collectors.toMap(Class::getSimpleName, Function.identity()));

    private final ExtendedActorSystem system;
    private volatile ObjectMapper mapper;

    public MessageSerializer(ExtendedActorSystem system) {
        this.system = system;
    }

    @Override
    public int identifier() {
        return 0x4b494c4e; // "KILN"
    }

    @Override
    public String manifest(Object o) {
        return o.getClass().getSimpleName();
    }

    @Override
    public byte[] toBinary(Object o) {
        try {
            return mapper().writeValueAsBytes(o);
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    "cannot serialize " + o.getClass().getSimpleName() + ": " + e, e);
        }
    }

    @Override
    public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
        Class<?> c = CLASSES.get(manifest);
        if (c == null) throw new NotSerializableException("not a Kiln cluster message: " + manifest);
        try {
            return mapper().readValue(bytes, c);
        } catch (IOException e) {
            throw new NotSerializableException("malformed " + manifest + ": " + e.getMessage());
        }
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    private ObjectMapper mapper() {
        ObjectMapper m = mapper;
        if (m == null) {
            ActorRefResolver resolver = ActorRefResolver.get(Adapter.toTyped(system));
            SimpleModule refs = new SimpleModule("kiln-actor-refs");
            refs.addSerializer(ActorRef.class, new JsonSerializer<ActorRef>() {
                @Override
                public void serialize(ActorRef ref, JsonGenerator g, SerializerProvider p) throws IOException {
                    g.writeString(resolver.toSerializationFormat(ref));
                }
            });
            refs.addDeserializer(ActorRef.class, new JsonDeserializer<ActorRef>() {
                @Override
                public ActorRef deserialize(JsonParser p, DeserializationContext c) throws IOException {
                    return resolver.resolveActorRef(p.getValueAsString());
                }
            });
            m = new ObjectMapper()
                    .registerModule(refs)
                    .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);
            mapper = m;
        }
        return m;
    }
}
