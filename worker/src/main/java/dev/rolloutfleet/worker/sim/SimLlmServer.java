package dev.rolloutfleet.worker.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.worker.policy.SchemaSampler;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;

/**
 * A simulated OpenAI-compatible inference server, vLLM-shaped, for local runs, tests and
 * benchmarks without a GPU: {@code POST /v1/chat/completions}, {@code GET /v1/models},
 * {@code GET /health}. Every completion is a tool call chosen from the request's tool schema,
 * deterministic for a given {@code seed} and prompt. A byte-level tokenizer and a prefix-stable
 * chat template mean turn k+1's prompt tokens start with turn k's prompt + generation, as with a
 * real model served with a stable template. Token ids come back the way vLLM returns them (top-level
 * {@code prompt_token_ids}, {@code choices[].token_ids}, {@code choices[].logprobs.content[].logprob}).
 * Latency is time-to-first-token plus per-token time, with a bounded number of concurrent slots.
 * {@link Faults} injects errors, 429s, template drift and empty generations. Thread-safe.
 */
public final class SimLlmServer implements AutoCloseable {

    /** Fault rates, each the probability that a request suffers it (drawn from the request's seed). */
    public record Faults(double errorRate, double rateLimitRate, double driftRate, double emptyRate) {
        public static final Faults NONE = new Faults(0, 0, 0, 0);
    }

    /** Latency model: time to first token, time per generated token, and concurrent slots. */
    public record Latency(long firstTokenMs, double perTokenMs, int slots) {
        public static final Latency ZERO = new Latency(0, 0, 1024);
    }

    private final HttpServer server;
    private final ExecutorService executor;
    private final Faults faults;
    private final Latency latency;
    private final Semaphore slots;
    private final String model;
    private final java.util.concurrent.atomic.AtomicLong requests = new java.util.concurrent.atomic.AtomicLong();

    private SimLlmServer(HttpServer server, ExecutorService executor, String model, Latency latency, Faults faults) {
        this.server = server;
        this.executor = executor;
        this.model = model;
        this.latency = latency;
        this.faults = faults;
        this.slots = new Semaphore(latency.slots());
    }

    /** Chat completion requests received so far, faults included. */
    public long requestCount() {
        return requests.get();
    }

    public static SimLlmServer start(String host, int port, String model, Latency latency, Faults faults) {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 0);
            ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
            server.setExecutor(executor);
            SimLlmServer sim = new SimLlmServer(server, executor, model, latency, faults);
            server.createContext("/v1/chat/completions", sim::completions);
            server.createContext("/v1/models", exchange -> respond(exchange, 200, Json.object().put("object", "list")
                    .set("data", Json.mapper().createArrayNode().add(Json.object().put("id", model).put("object", "model")))));
            server.createContext("/health", exchange -> respond(exchange, 200, Json.object().put("status", "ok")));
            server.start();
            return sim;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the simulated inference server on " + host + ":" + port, e);
        }
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** The base URL clients use as {@code inference_url}, e.g. {@code http://127.0.0.1:8000/v1}. */
    public String baseUrl() {
        return "http://" + server.getAddress().getHostString() + ":" + port() + "/v1";
    }

    private void completions(HttpExchange exchange) throws IOException {
        if (!"POST".equals(exchange.getRequestMethod())) {
            respond(exchange, 405, error("use POST"));
            return;
        }
        JsonNode request;
        try (InputStream in = exchange.getRequestBody()) {
            request = Json.mapper().readTree(in);
        } catch (IOException e) {
            respond(exchange, 400, error("the body is not JSON"));
            return;
        }
        ArrayNode tools = request.path("tools").isArray() ? (ArrayNode) request.get("tools") : null;
        if (tools == null || tools.isEmpty()) {
            respond(exchange, 400, error("the simulated server answers with tool calls; send tools"));
            return;
        }
        long seed = request.path("seed").asLong(0);
        String prompt = ChatTemplate.render(request.path("messages"), false);
        SplittableRandom random = new SplittableRandom(seed * 31 + prompt.hashCode());
        // Faults draw from the server's own sequence, so a retried request can succeed.
        SplittableRandom faultDraw = new SplittableRandom(requests.getAndIncrement());
        double roll = faultDraw.nextDouble();
        if (roll < faults.errorRate()) {
            respond(exchange, 500, error("injected server error"));
            return;
        }
        if (roll < faults.errorRate() + faults.rateLimitRate()) {
            respond(exchange, 429, error("injected rate limit"));
            return;
        }
        boolean drift = faultDraw.nextDouble() < faults.driftRate();
        boolean empty = faultDraw.nextDouble() < faults.emptyRate();
        // Drift: the history is rendered the way a changed template would, so this prompt no longer
        // extends the previous turn's prompt and generation.
        String promptText = ChatTemplate.render(request.path("messages"), drift) + ChatTemplate.GENERATION_PROMPT;
        List<Integer> promptIds = ByteTokenizer.encode(promptText);

        ObjectNode message = Json.object().put("role", "assistant");
        String generated;
        String finishReason;
        if (empty) {
            message.putNull("content");
            generated = "";
            finishReason = "stop";
        } else {
            JsonNode tool = tools.get(random.nextInt(tools.size())).path("function");
            String name = tool.path("name").asText();
            String arguments = Json.encodeToString(SchemaSampler.sample(tool.path("parameters"), random));
            String callId = "call_" + Long.toHexString(random.nextLong() & Long.MAX_VALUE);
            message.putNull("content");
            message.putArray("tool_calls").add(Json.object().put("id", callId).put("type", "function")
                    .set("function", Json.object().put("name", name).put("arguments", arguments)));
            generated = ChatTemplate.assistantText(name, arguments);
            finishReason = "tool_calls";
        }
        List<Integer> generationIds = ByteTokenizer.encode(generated);
        try {
            slots.acquire();
            try {
                long waitMs = latency.firstTokenMs() + Math.round(latency.perTokenMs() * generationIds.size());
                if (waitMs > 0) {
                    Thread.sleep(waitMs);
                }
            } finally {
                slots.release();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        ArrayNode logprobContent = Json.mapper().createArrayNode();
        for (int i = 0; i < generationIds.size(); i++) {
            double logprob = -Math.abs(random.nextGaussian()) * 0.5;
            logprobContent.add(Json.object().put("token", "token_id:" + generationIds.get(i)).put("logprob", logprob));
        }
        ObjectNode choice = Json.object().put("index", 0);
        choice.set("message", message);
        choice.put("finish_reason", finishReason);
        choice.set("token_ids", Json.tree(generationIds));
        choice.set("logprobs", Json.object().set("content", logprobContent));
        ObjectNode response = Json.object().put("id", "chatcmpl-" + Long.toHexString(random.nextLong() & Long.MAX_VALUE))
                .put("object", "chat.completion").put("created", System.currentTimeMillis() / 1000)
                .put("model", request.path("model").asText(model));
        response.set("prompt_token_ids", Json.tree(promptIds));
        response.putArray("choices").add(choice);
        response.set("usage", Json.object().put("prompt_tokens", promptIds.size())
                .put("completion_tokens", generationIds.size()).put("total_tokens", promptIds.size() + generationIds.size()));
        respond(exchange, 200, response);
    }

    private static ObjectNode error(String message) {
        ObjectNode body = Json.object();
        body.set("error", Json.object().put("message", message).put("type", "sim_error"));
        return body;
    }

    private static void respond(HttpExchange exchange, int status, JsonNode body) throws IOException {
        byte[] bytes = Json.encode(body);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.close();
    }
}
