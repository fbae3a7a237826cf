package dev.rolloutfleet.common.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.type.LogicalType;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The one JSON codec of the wire contract: snake_case names, absent values omitted, no silent
 * scalar coercion (a number where a string belongs is a type error, not a string), trailing
 * garbage refused. Thread-safe; share the instance.
 */
public final class Json {

    private static final ObjectMapper MAPPER = build();

    private Json() {}

    public static ObjectMapper mapper() {
        return MAPPER;
    }

    private static ObjectMapper build() {
        // Buffers are recycled through a shared pool, not per thread: rollouts run on virtual
        // threads, each new, so a thread-local pool would allocate fresh buffers on every call.
        JsonFactory factory = JsonFactory.builder().recyclerPool(JsonRecyclerPools.sharedLockFreePool()).build();
        JsonMapper mapper = JsonMapper.builder(factory)
                .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
                .serializationInclusion(JsonInclude.Include.NON_NULL)
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
                .build();
        refuse(mapper, LogicalType.Textual, CoercionInputShape.Integer, CoercionInputShape.Float, CoercionInputShape.Boolean);
        refuse(mapper, LogicalType.Integer, CoercionInputShape.String, CoercionInputShape.Float, CoercionInputShape.Boolean);
        refuse(mapper, LogicalType.Float, CoercionInputShape.String, CoercionInputShape.Boolean);
        refuse(mapper, LogicalType.Boolean, CoercionInputShape.String, CoercionInputShape.Integer);
        return mapper;
    }

    private static void refuse(JsonMapper mapper, LogicalType target, CoercionInputShape... shapes) {
        for (CoercionInputShape shape : shapes) {
            mapper.coercionConfigFor(target).setCoercion(shape, CoercionAction.Fail);
        }
    }

    /** Encodes a wire value; the contract's records always encode, so failure is a bug. */
    public static byte[] encode(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode " + value.getClass().getSimpleName(), e);
        }
    }

    public static String encodeToString(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode " + value.getClass().getSimpleName(), e);
        }
    }

    /**
     * Decodes bytes into a wire record.
     *
     * @throws WireFormatException naming what is wrong, when the bytes are empty, not JSON, or do
     *     not fit the record's shape
     */
    public static <T> T decode(byte[] bytes, Class<T> type) {
        if (bytes == null || bytes.length == 0) {
            throw new WireFormatException("empty_value", "the value is " + (bytes == null ? "null" : "empty")
                    + "; expected a JSON " + type.getSimpleName());
        }
        try {
            T value = MAPPER.readValue(bytes, type);
            if (value == null) {
                throw new WireFormatException("empty_value", "the value is JSON null; expected a JSON " + type.getSimpleName());
            }
            return value;
        } catch (com.fasterxml.jackson.databind.exc.MismatchedInputException e) {
            throw new WireFormatException("wrong_type", describe(e), e);
        } catch (JsonProcessingException e) {
            throw new WireFormatException("not_json", "the value is not valid JSON: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static <T> T decode(String json, Class<T> type) {
        return decode(json.getBytes(java.nio.charset.StandardCharsets.UTF_8), type);
    }

    public static ObjectNode object() {
        return JsonNodeFactory.instance.objectNode();
    }

    public static JsonNode tree(Object value) {
        return MAPPER.valueToTree(value);
    }

    private static String describe(com.fasterxml.jackson.databind.exc.MismatchedInputException e) {
        StringBuilder path = new StringBuilder();
        for (var ref : e.getPath()) {
            if (ref.getFieldName() != null) {
                if (!path.isEmpty()) {
                    path.append('.');
                }
                path.append(ref.getFieldName());
            } else if (ref.getIndex() >= 0) {
                path.append('[').append(ref.getIndex()).append(']');
            }
        }
        String where = path.isEmpty() ? "the value" : path.toString();
        return where + " has the wrong type: " + e.getOriginalMessage();
    }
}
