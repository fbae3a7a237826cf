package dev.rolloutfleet.worker.env;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.worker.policy.Policies;
import dev.rolloutfleet.worker.rollout.AttemptContext;
import dev.rolloutfleet.worker.rollout.RolloutListener;
import dev.rolloutfleet.worker.rollout.RolloutRunner;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The remote environment adapter against a small task-app env server on 127.0.0.1. */
class HttpEnvironmentTest {

    private HttpServer server;
    private final List<String> calls = new CopyOnWriteArrayList<>();
    private final List<String> apiKeys = new CopyOnWriteArrayList<>();
    private volatile String stepMode = "ok";
    private final CountDownLatch release = new CountDownLatch(1);
    private final RolloutRunner runner = new RolloutRunner(Environments.builtIn(), Policies.builtIn(), Clock.systemUTC());

    @BeforeEach
    void startEnvServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        int[] position = {0};
        server.createContext("/env/", exchange -> {
            String route = exchange.getRequestURI().getPath().substring("/env/".length());
            calls.add(route);
            apiKeys.add(String.valueOf(exchange.getRequestHeaders().getFirst("X-API-Key")));
            JsonNode body = Json.mapper().readTree(exchange.getRequestBody());
            switch (route) {
                case "create", "reset" -> {
                    position[0] = 0;
                    respond(exchange, 200, Json.object().put("env_id", "remote-1")
                            .set("observation", Json.object().put("position", 0).put("goal", 3)));
                }
                case "step" -> {
                    if (stepMode.equals("error")) {
                        respond(exchange, 500, Json.object().put("detail", "the simulator crashed"));
                    } else if (stepMode.equals("stall")) {
                        try {
                            release.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        exchange.close();
                    } else {
                        String direction = body.path("tool_calls").path(0).path("args").path("direction").asText();
                        position[0] += direction.equals("right") ? 1 : -1;
                        boolean done = position[0] >= 3;
                        respond(exchange, 200, Json.object().put("reward", done ? 1.0 : 0.0).put("done", done)
                                .set("observation", Json.object().put("position", position[0]).put("goal", 3)));
                    }
                }
                default -> respond(exchange, 200, Json.object());
            }
        });
        server.start();
    }

    @AfterEach
    void stop() {
        release.countDown();
        server.stop(0);
    }

    private RolloutRequest request(String apiKeyEnv, double timeoutS) {
        ObjectNode config = Json.object().put("base_url", "http://127.0.0.1:" + server.getAddress().getPort())
                .put("remote_env_name", "corridor-remote").put("timeout_s", timeoutS);
        if (apiKeyEnv != null) {
            config.put("api_key_env", apiKeyEnv);
        }
        config.putObject("env_params").put("max_steps_per_episode", 10);
        return new RolloutRequest(SchemaVersion.CURRENT, "remote-run", null, new RolloutRequest.EnvSpec("http", 5L, config),
                new RolloutRequest.PolicySpec("scripted", Json.object()), null, null, RolloutRequest.ON_DONE_TERMINATE,
                null, null, null, null, null, null);
    }

    private RolloutResult run(RolloutRequest request) {
        return runner.run(request, new AttemptContext("a1", null, 0), RolloutListener.NONE);
    }

    @Test
    void aRolloutRunsAgainstTheRemoteRoutesAndTerminatesTheInstance() {
        RolloutResult result = run(request(null, 5));
        assertThat(result.status()).isEqualTo(RolloutStatus.OK);
        assertThat(result.metrics().numSteps()).isEqualTo(3);
        assertThat(result.metrics().episodeReturns()).containsExactly(1.0);
        assertThat(calls).containsExactly("create", "step", "step", "step", "terminate");
    }

    @Test
    void theApiKeyGoesInTheHeaderAndNowhereElse() {
        // PATH is set in every test JVM; its value stands in for a secret.
        String secret = System.getenv("PATH");
        RolloutResult result = run(request("PATH", 5));
        assertThat(apiKeys).containsOnly(secret);
        assertThat(Json.encodeToString(result)).doesNotContain(secret);
    }

    @Test
    void aServerErrorEndsTheRolloutWithEnvStepFailed() {
        stepMode = "error";
        RolloutResult result = run(request(null, 5));
        assertThat(result.status()).isEqualTo(RolloutStatus.FAILED);
        assertThat(result.error().code()).isEqualTo("env_step_failed");
        assertThat(result.error().message()).contains("HTTP 500").contains("the simulator crashed");
    }

    @Test
    void aStalledStepTimesOutAsEnvStepFailed() {
        stepMode = "stall";
        RolloutResult result = run(request(null, 0.5));
        assertThat(result.status()).isEqualTo(RolloutStatus.FAILED);
        assertThat(result.error().code()).isEqualTo("env_step_failed");
        assertThat(result.error().message()).contains("Timeout");
    }

    @Test
    void anUnsetApiKeyVariableIsAClearFailure() {
        RolloutResult result = run(request("ROLLOUT_FLEET_TEST_UNSET_VARIABLE", 5));
        assertThat(result.error().code()).isEqualTo("env_step_failed");
        assertThat(result.error().message()).contains("ROLLOUT_FLEET_TEST_UNSET_VARIABLE").contains("not set");
    }

    private static void respond(HttpExchange exchange, int status, JsonNode body) throws IOException {
        byte[] bytes = Json.encode(body);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
