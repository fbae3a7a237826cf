package dev.rolloutfleet.worker.env;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;

/** One tool call of a policy decision, as environments receive it: a tool name and its arguments. */
public record ToolCall(String tool, ObjectNode args) {

    public ToolCall {
        args = args == null ? Json.object() : args;
    }

    /** The form recorded in a trajectory step: {@code {"tool": ..., "args": {...}}}. */
    public ObjectNode toJson() {
        ObjectNode node = Json.object().put("tool", tool);
        node.set("args", args.deepCopy());
        return node;
    }
}
