package dev.rolloutfleet.worker.policy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.worker.env.Environments;
import dev.rolloutfleet.worker.rollout.AttemptContext;
import dev.rolloutfleet.worker.rollout.RolloutListener;
import dev.rolloutfleet.worker.rollout.RolloutRunner;
import dev.rolloutfleet.worker.sim.SimLlmServer;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/** The OpenAI-compatible policy against real HTTP servers on 127.0.0.1. */
class OpenAiPolicyTest {

    private final RolloutRunner runner = new RolloutRunner(Environments.builtIn(), Policies.builtIn(), Clock.systemUTC());

    static RolloutRequest request(String url, ObjectNode extra) {
        ObjectNode envConfig = Json.object();
        envConfig.putObject("env_params").put("max_steps_per_episode", 3);
        ObjectNode config = Json.object().put("inference_url", url).put("model", "sim-1").put("max_retries", 2);
        config.setAll(extra);
        return new RolloutRequest(SchemaVersion.CURRENT, "llm", null, new RolloutRequest.EnvSpec("crafter-lite", 3L, envConfig),
                new RolloutRequest.PolicySpec("openai", config), null, null, RolloutRequest.ON_DONE_TERMINATE, null, null,
                null, null, null, null);
    }

    private RolloutResult run(RolloutRequest request, List<ObjectNode> events) {
        return runner.run(request, new AttemptContext("a1", null, 0), new RolloutListener() {
            @Override
            public void lmCall(ObjectNode payload) {
                events.add(payload);
            }
        });
    }

    @Test
    void decisionsAreToolCallsFromTheServerWithAnLmCallEventEach() {
        try (SimLlmServer sim = SimLlmServer.start("127.0.0.1", 0, "sim-1", SimLlmServer.Latency.ZERO, SimLlmServer.Faults.NONE)) {
            List<ObjectNode> events = new ArrayList<>();
            RolloutResult result = run(request(sim.baseUrl(), Json.object()), events);
            assertThat(result.status()).isEqualTo(RolloutStatus.OK);
            assertThat(result.metrics().numSteps()).isEqualTo(3);
            assertThat(result.trajectories().get(0).steps()).allSatisfy(step ->
                    assertThat(step.toolCalls().get(0).get("tool").asText()).isEqualTo("interact"));
            assertThat(events).hasSize(3).allSatisfy(e -> {
                assertThat(e.get("model").asText()).isEqualTo("sim-1");
                assertThat(e.at("/usage/completion_tokens").asInt()).isPositive();
                assertThat(e.get("finish_reason").asText()).isEqualTo("tool_calls");
            });
        }
    }

    @Test
    void aServerThatAlwaysFailsEndsTheRolloutWithPolicyStepFailedAfterTheRetries() {
        try (SimLlmServer sim = SimLlmServer.start("127.0.0.1", 0, "sim-1", SimLlmServer.Latency.ZERO,
                new SimLlmServer.Faults(0.5, 0.5, 0, 0))) {
            RolloutResult result = run(request(sim.baseUrl(), Json.object()), new ArrayList<>());
            assertThat(result.status()).isEqualTo(RolloutStatus.FAILED);
            assertThat(result.error().code()).isEqualTo("policy_step_failed");
            assertThat(result.error().message()).contains("failed 3 times");
        }
    }

    @Test
    void anAnswerWithoutToolCallsEndsTheRolloutWithNoToolCalls() {
        try (SimLlmServer sim = SimLlmServer.start("127.0.0.1", 0, "sim-1", SimLlmServer.Latency.ZERO,
                new SimLlmServer.Faults(0, 0, 0, 1.0))) {
            RolloutResult result = run(request(sim.baseUrl(), Json.object()), new ArrayList<>());
            assertThat(result.error().code()).isEqualTo("no_tool_calls");
        }
    }

    @Test
    void theApiKeyIsSentAsABearerTokenAndAppearsNowhereElse() throws Exception {
        // PATH is set in every test JVM; its value stands in for a secret.
        String secret = System.getenv("PATH");
        List<String> authorizations = new CopyOnWriteArrayList<>();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/v1/chat/completions", exchange -> {
            authorizations.add(exchange.getRequestHeaders().getFirst("Authorization"));
            JsonNode request = Json.mapper().readTree(exchange.getRequestBody());
            assertThat(request.toString()).doesNotContain(secret);
            byte[] body = ("{\"model\":\"m\",\"choices\":[{\"index\":0,\"finish_reason\":\"tool_calls\",\"message\":{\"role\":"
                    + "\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"interact\","
                    + "\"arguments\":\"{\\\"actions\\\":[\\\"noop\\\"]}\"}}]}}]}").getBytes(java.nio.charset.StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        try {
            List<ObjectNode> events = new ArrayList<>();
            RolloutResult result = run(request("http://127.0.0.1:" + server.getAddress().getPort() + "/v1",
                    Json.object().put("api_key_env", "PATH")), events);
            assertThat(result.status()).isEqualTo(RolloutStatus.OK);
            assertThat(authorizations).isNotEmpty().containsOnly("Bearer " + secret);
            assertThat(Json.encodeToString(result)).doesNotContain(secret);
            assertThat(events.toString()).doesNotContain(secret);
        } finally {
            server.stop(0);
        }
    }
}
