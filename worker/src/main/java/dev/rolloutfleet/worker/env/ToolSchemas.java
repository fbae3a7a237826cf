package dev.rolloutfleet.worker.env;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;

/** Builds tools in the OpenAI {@code tools} format for the built-in environments. */
final class ToolSchemas {

    private ToolSchemas() {}

    /** A function tool taking one required argument {@code argument} of the given schema. */
    static ObjectNode function(String name, String description, String argument, ObjectNode argumentSchema) {
        ObjectNode parameters = Json.object().put("type", "object");
        parameters.putObject("properties").set(argument, argumentSchema);
        parameters.putArray("required").add(argument);
        ObjectNode function = Json.object().put("name", name).put("description", description);
        function.set("parameters", parameters);
        ObjectNode tool = Json.object().put("type", "function");
        tool.set("function", function);
        return tool;
    }
}
