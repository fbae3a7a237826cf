package dev.rolloutfleet.worker.sim;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The simulated server's chat template. Each message renders as {@code <|role|>\n TEXT \n}; an
 * assistant message with tool calls renders its calls exactly as the server generated them, so
 * the next turn's prompt starts with this turn's prompt and generation (prefix stability). A
 * drifted render re-serializes earlier assistant turns (as a changed template or a re-tokenized
 * history would), so the prompt no longer extends them.
 */
final class ChatTemplate {

    static final String GENERATION_PROMPT = "<|assistant|>\n";

    private ChatTemplate() {}

    static String render(JsonNode messages, boolean drift) {
        StringBuilder out = new StringBuilder();
        for (JsonNode message : messages) {
            String role = message.path("role").asText("user");
            out.append("<|").append(role).append("|>\n");
            if ("assistant".equals(role) && message.path("tool_calls").isArray() && !message.path("tool_calls").isEmpty()) {
                JsonNode call = message.path("tool_calls").get(0).path("function");
                String arguments = call.path("arguments").asText();
                // Drift re-serializes earlier turns differently from how they were generated.
                String text = assistantText(call.path("name").asText(), drift ? arguments.replace(":", ": ") : arguments);
                // The generation already ends with the newline that closes the message.
                out.append(text);
            } else {
                String content = message.path("content").isNull() ? "" : message.path("content").asText("");
                out.append(content).append('\n');
            }
        }
        return out.toString();
    }

    /** What the server generates for a tool call, and how the template renders it back. */
    static String assistantText(String name, String arguments) {
        return "<tool_call>{\"name\":\"" + name + "\",\"arguments\":" + arguments + "}</tool_call>\n";
    }
}
