package dev.rolloutfleet.worker.env;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * An environment served elsewhere, through the task-app environment routes:
 * {@code POST {base_url}/env/create}, {@code /env/step} (with the tool calls), {@code /env/reset},
 * {@code /env/terminate}. Config ({@code env.config}): {@code base_url} (required),
 * {@code remote_env_name} (the name to create remotely; default {@code env.env_id}),
 * {@code api_key_env} (an environment variable whose value is sent as {@code X-API-Key}; never
 * logged), {@code timeout_s} (per call, default 30). Any failure of a call is an
 * {@link EnvironmentException}, which ends the rollout with {@code env_step_failed}.
 */
public final class HttpEnvironment implements Environment {

    public static final String NAME = "http";

    private final HttpClient http;
    private final URI base;
    private final String remoteName;
    private final ObjectNode config;
    private final long seed;
    private final String apiKey;
    private final Duration timeout;
    private String envId;
    private List<ObjectNode> tools = List.of();

    HttpEnvironment(HttpClient http, URI base, String remoteName, ObjectNode config, long seed, String apiKey, Duration timeout) {
        this.http = http;
        this.base = base;
        this.remoteName = remoteName;
        this.config = config;
        this.seed = seed;
        this.apiKey = apiKey;
        this.timeout = timeout;
    }

    @Override
    public ObjectNode reset() throws EnvironmentException {
        if (envId == null) {
            ObjectNode body = Json.object().put("env_name", remoteName).put("seed", seed);
            body.set("config", config);
            JsonNode created = post("create", body);
            envId = created.path("env_id").asText(null);
            if (envId == null) {
                throw new EnvironmentException("the remote environment's create answer has no env_id");
            }
            List<ObjectNode> offered = new ArrayList<>();
            for (JsonNode tool : created.path("tools")) {
                if (tool.isObject()) {
                    offered.add((ObjectNode) tool);
                }
            }
            tools = List.copyOf(offered);
            return observation(created);
        }
        return observation(post("reset", Json.object().put("env_id", envId)));
    }

    @Override
    public EnvStep step(List<ToolCall> toolCalls) throws EnvironmentException {
        ObjectNode body = Json.object().put("env_id", envId);
        ArrayNode calls = body.putArray("tool_calls");
        toolCalls.forEach(c -> calls.add(c.toJson()));
        JsonNode answer = post("step", body);
        ObjectNode info = answer.path("info").isObject() ? (ObjectNode) answer.get("info") : Json.object();
        return new EnvStep(observation(answer), answer.path("reward").asDouble(0), answer.path("done").asBoolean(false),
                answer.path("truncated").asBoolean(false), info);
    }

    @Override
    public List<ObjectNode> tools() {
        return tools;
    }

    @Override
    public void close() {
        if (envId != null) {
            try {
                post("terminate", Json.object().put("env_id", envId));
            } catch (EnvironmentException e) {
                // The rollout is over either way; the remote side reaps abandoned instances.
            }
        }
    }

    private static ObjectNode observation(JsonNode answer) {
        JsonNode observation = answer.path("observation");
        return observation.isObject() ? (ObjectNode) observation : Json.object().set("value", observation);
    }

    private JsonNode post(String route, ObjectNode body) throws EnvironmentException {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve("env/" + route)).timeout(timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(Json.encode(body)));
        if (apiKey != null) {
            request.header("X-API-Key", apiKey);
        }
        try {
            HttpResponse<byte[]> response = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            String text = new String(response.body(), StandardCharsets.UTF_8);
            if (response.statusCode() / 100 != 2) {
                throw new EnvironmentException("env/" + route + " answered HTTP " + response.statusCode() + ": "
                        + (text.length() > 300 ? text.substring(0, 300) + "..." : text));
            }
            return text.isBlank() ? Json.object() : Json.mapper().readTree(text);
        } catch (IOException e) {
            throw new EnvironmentException("env/" + route + " at " + base + " failed: " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : " " + e.getMessage()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EnvironmentException("env/" + route + " was interrupted", e);
        }
    }

    /** Makes remote environments from {@code env.config}. */
    public static final class Factory implements EnvironmentFactory {
        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public Environment create(RolloutRequest.EnvSpec spec, long seed) throws EnvironmentException {
            ObjectNode config = spec.config() == null ? Json.object() : spec.config();
            String baseUrl = config.path("base_url").asText("");
            if (baseUrl.isBlank()) {
                throw new EnvironmentException("env.config.base_url is required for the http environment");
            }
            URI base;
            try {
                base = URI.create(baseUrl.endsWith("/") ? baseUrl : baseUrl + "/");
            } catch (IllegalArgumentException e) {
                throw new EnvironmentException("env.config.base_url is not a URL: " + baseUrl);
            }
            String apiKey;
            try {
                apiKey = ApiKeys.fromEnvironment(config, "env.config");
            } catch (IllegalArgumentException e) {
                throw new EnvironmentException(e.getMessage());
            }
            String remote = config.path("remote_env_name").asText(spec.envId() == null ? "default" : spec.envId());
            return new HttpEnvironment(http, base, remote, config, seed, apiKey,
                    Duration.ofMillis((long) (config.path("timeout_s").asDouble(30) * 1000)));
        }
    }
}
