package dev.rolloutfleet.worker.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import java.util.Iterator;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Fills a JSON schema (the {@code parameters} of a tool) with valid values drawn from a random
 * source: enums pick a member, arrays take {@code minItems}..{@code maxItems} (at most 3) items,
 * objects fill every property. Used by the scripted policy and the simulated inference server.
 */
public final class SchemaSampler {

    private SchemaSampler() {}

    public static JsonNode sample(JsonNode schema, SplittableRandom random) {
        JsonNode enumValues = schema.get("enum");
        if (enumValues != null && enumValues.isArray() && !enumValues.isEmpty()) {
            return enumValues.get(random.nextInt(enumValues.size()));
        }
        return switch (schema.path("type").asText("object")) {
            case "object" -> {
                ObjectNode object = Json.object();
                Iterator<Map.Entry<String, JsonNode>> properties = schema.path("properties").fields();
                while (properties.hasNext()) {
                    Map.Entry<String, JsonNode> property = properties.next();
                    object.set(property.getKey(), sample(property.getValue(), random));
                }
                yield object;
            }
            case "array" -> {
                ArrayNode array = Json.mapper().createArrayNode();
                int min = schema.path("minItems").asInt(1);
                int max = Math.max(min, Math.min(schema.path("maxItems").asInt(3), 3));
                int n = min + random.nextInt(max - min + 1);
                for (int i = 0; i < n; i++) {
                    array.add(sample(schema.path("items"), random));
                }
                yield array;
            }
            case "integer" -> Json.mapper().getNodeFactory().numberNode(random.nextInt(10));
            case "number" -> Json.mapper().getNodeFactory().numberNode(random.nextInt(100) / 10.0);
            case "boolean" -> Json.mapper().getNodeFactory().booleanNode(random.nextBoolean());
            default -> Json.mapper().getNodeFactory().textNode("x");
        };
    }
}
