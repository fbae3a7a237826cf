package dev.rolloutfleet.worker.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.worker.capture.TokenCapture;
import dev.rolloutfleet.worker.env.ApiKeys;
import dev.rolloutfleet.worker.env.ToolCall;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A policy backed by an OpenAI-compatible chat-completions endpoint (vLLM, SGLang, the simulated
 * server). Each decision sends the conversation so far with the environment's tools and reads the
 * tool calls back. 429s, 5xx responses and connection errors are retried with exponential backoff
 * and jitter; each call has a timeout. The API key is read from the environment variable named by
 * {@code api_key_env} and never logged, traced or put in an error. When the rollout participates in
 * token capture, the request asks for token ids and log-probs the way vLLM returns them, and each
 * call's ids are handed to the attempt's {@link TokenCapture}. One instance per rollout.
 */
public final class OpenAiPolicy implements Policy {

    public static final String NAME = "openai";

    private final HttpClient http;
    private final URI endpoint;
    private final String model;
    private final ObjectNode config;
    private final List<ObjectNode> tools;
    private final TokenCapture capture;
    private final String apiKey;
    private final int maxRetries;
    private final Duration timeout;
    private final long seed;
    private final SplittableRandom jitter;
    private final ArrayNode messages = Json.mapper().createArrayNode();
    private String lastToolCallId;

    OpenAiPolicy(HttpClient http, URI endpoint, String model, ObjectNode config, List<ObjectNode> tools,
            TokenCapture capture, String apiKey, int maxRetries, Duration timeout, long seed) {
        this.http = http;
        this.endpoint = endpoint;
        this.model = model;
        this.config = config;
        this.tools = tools;
        this.capture = capture;
        this.apiKey = apiKey;
        this.maxRetries = maxRetries;
        this.timeout = timeout;
        this.seed = seed;
        this.jitter = new SplittableRandom(seed);
        String system = config.path("system_prompt").asText("You are an agent. Act only by calling the tools you are given.");
        messages.add(Json.object().put("role", "system").put("content", system));
    }

    @Override
    public Decision decide(ObjectNode observation, int decisionIndex) throws PolicyException, InterruptedException {
        String text = observation.path("text").isTextual() ? observation.get("text").asText() : observation.toString();
        if (lastToolCallId != null) {
            messages.add(Json.object().put("role", "tool").put("tool_call_id", lastToolCallId).put("content", text));
        } else {
            messages.add(Json.object().put("role", "user").put("content", text));
        }
        ObjectNode body = Json.object().put("model", model).put("seed", seed + decisionIndex);
        body.set("messages", messages.deepCopy());
        ArrayNode toolArray = body.putArray("tools");
        tools.forEach(toolArray::add);
        body.put("tool_choice", "required");
        if (config.has("temperature")) {
            body.set("temperature", config.get("temperature"));
        }
        if (config.has("max_tokens")) {
            body.set("max_tokens", config.get("max_tokens"));
        }
        if (capture.participating()) {
            body.put("logprobs", true).put("return_token_ids", true);
        }
        long start = System.nanoTime();
        Attempted attempted = post(body);
        double inferenceMs = (System.nanoTime() - start) / 1e6;
        JsonNode response = attempted.response();
        JsonNode choice = response.path("choices").path(0);
        JsonNode message = choice.path("message");

        List<ToolCall> calls = new ArrayList<>();
        for (JsonNode call : message.path("tool_calls")) {
            JsonNode function = call.path("function");
            String arguments = function.path("arguments").asText("{}");
            JsonNode parsed;
            try {
                parsed = Json.mapper().readTree(arguments);
            } catch (IOException e) {
                throw new PolicyException("the model's tool call " + function.path("name").asText()
                        + " has arguments that are not JSON: " + abbreviate(arguments));
            }
            calls.add(new ToolCall(function.path("name").asText(), parsed != null && parsed.isObject() ? (ObjectNode) parsed : Json.object()));
            if (lastToolCallId == null || calls.size() == 1) {
                lastToolCallId = call.path("id").asText("call_" + decisionIndex);
            }
        }
        ObjectNode assistant = message.deepCopy();
        assistant.put("role", "assistant");
        messages.add(assistant);

        String callId = String.format(Locale.ROOT, "c%05d", decisionIndex);
        if (capture.participating()) {
            capture.record(callId, response.path("model").asText(model), ints(response.get("prompt_token_ids")),
                    ints(choice.get("token_ids")), logprobs(choice.path("logprobs").path("content")), outputOf(message));
        }
        ObjectNode meta = Json.object().put("policy", NAME).put("model", response.path("model").asText(model))
                .put("inference_ms", inferenceMs).put("retries", attempted.retries())
                .put("finish_reason", choice.path("finish_reason").asText(null)).put("call_id", callId);
        if (response.has("usage")) {
            meta.set("usage", response.get("usage"));
        }
        return new Decision(calls, meta);
    }

    private record Attempted(JsonNode response, int retries) {}

    private Attempted post(ObjectNode body) throws PolicyException, InterruptedException {
        byte[] bytes = Json.encode(body);
        for (int attempt = 0; ; attempt++) {
            HttpRequest.Builder request = HttpRequest.newBuilder(endpoint).timeout(timeout)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(bytes));
            if (apiKey != null) {
                request.header("Authorization", "Bearer " + apiKey);
            }
            String failure;
            try {
                HttpResponse<byte[]> response = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
                int status = response.statusCode();
                if (status == 200) {
                    return new Attempted(Json.mapper().readTree(response.body()), attempt);
                }
                String detail = abbreviate(new String(response.body(), java.nio.charset.StandardCharsets.UTF_8));
                if (status != 429 && status < 500) {
                    throw new PolicyException("the inference server at " + endpoint + " refused the request: HTTP " + status
                            + " " + detail);
                }
                failure = "HTTP " + status + " " + detail;
            } catch (IOException e) {
                failure = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
            }
            if (attempt >= maxRetries) {
                throw new PolicyException("the inference server at " + endpoint + " failed " + (attempt + 1)
                        + " times; last: " + failure);
            }
            long backoff = Math.min(10_000, 200L << attempt);
            Thread.sleep(backoff + jitter.nextLong(backoff + 1));
        }
    }

    private static List<Integer> ints(JsonNode array) {
        if (array == null || !array.isArray()) {
            return null;
        }
        List<Integer> out = new ArrayList<>(array.size());
        array.forEach(n -> out.add(n.asInt()));
        return out;
    }

    private static List<Double> logprobs(JsonNode content) {
        if (content == null || !content.isArray()) {
            return null;
        }
        List<Double> out = new ArrayList<>(content.size());
        content.forEach(n -> out.add(n.path("logprob").asDouble()));
        return out;
    }

    private static ObjectNode outputOf(JsonNode message) {
        ObjectNode output = Json.object();
        output.set("content", message.path("content"));
        output.set("tool_calls", message.path("tool_calls"));
        return output;
    }

    private static String abbreviate(String s) {
        return s.length() <= 300 ? s : s.substring(0, 300) + "...";
    }

    /**
     * Makes OpenAI-compatible policies from {@code policy.config}: {@code inference_url} (base, e.g.
     * {@code http://host:8000/v1}), {@code model}, {@code temperature}, {@code max_tokens},
     * {@code max_retries} (default 3), {@code timeout_s} (default 60), {@code api_key_env},
     * {@code system_prompt}.
     */
    public static final class Factory implements PolicyFactory {
        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public Policy create(RolloutRequest.PolicySpec spec, PolicyContext context) throws PolicyException {
            ObjectNode config = spec.config() == null ? Json.object() : spec.config();
            String url = config.path("inference_url").asText("");
            if (url.isBlank()) {
                throw new PolicyException("policy.config.inference_url is required for the openai policy");
            }
            URI endpoint;
            try {
                endpoint = URI.create(url.endsWith("/chat/completions") ? url : url.replaceAll("/+$", "") + "/chat/completions");
            } catch (IllegalArgumentException e) {
                throw new PolicyException("policy.config.inference_url is not a URL: " + url);
            }
            String apiKey;
            try {
                apiKey = ApiKeys.fromEnvironment(config, "policy.config");
            } catch (IllegalArgumentException e) {
                throw new PolicyException(e.getMessage());
            }
            return new OpenAiPolicy(http, endpoint, config.path("model").asText("default"), config, context.tools(),
                    context.capture(), apiKey, config.path("max_retries").asInt(3),
                    Duration.ofMillis((long) (config.path("timeout_s").asDouble(60) * 1000)), context.seed());
        }
    }
}
