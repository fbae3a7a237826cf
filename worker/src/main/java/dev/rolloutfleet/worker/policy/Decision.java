package dev.rolloutfleet.worker.policy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.worker.env.ToolCall;
import java.util.List;

/** What a policy decided: the tool calls to apply, and metadata (model, timing, tokens) for the step's info. */
public record Decision(List<ToolCall> toolCalls, ObjectNode meta) {

    public Decision {
        toolCalls = List.copyOf(toolCalls);
    }
}
