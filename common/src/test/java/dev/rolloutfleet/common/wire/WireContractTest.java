package dev.rolloutfleet.common.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.RolloutResult.CaptureInfo;
import dev.rolloutfleet.common.wire.RolloutResult.RolloutError;
import dev.rolloutfleet.common.wire.RolloutResult.RolloutMetrics;
import dev.rolloutfleet.common.wire.RolloutResult.Step;
import dev.rolloutfleet.common.wire.RolloutResult.Trajectory;
import dev.rolloutfleet.common.wire.RolloutResult.Watermark;
import dev.rolloutfleet.common.wire.RolloutResult.WorkerInfo;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class WireContractTest {

    static RolloutRequest fullRequest() {
        ObjectNode envConfig = Json.object();
        envConfig.putObject("env_params").put("max_steps_per_episode", 7);
        ObjectNode policyConfig = Json.object().put("model", "qwen3-8b").put("inference_url", "http://127.0.0.1:8000/v1")
                .put("temperature", 0.7).put("max_tokens", 256);
        policyConfig.putObject("step_rewards").put("enabled", true).put("mode", "decision_stepwise");
        return new RolloutRequest(1, "run-1", "group-a",
                new RolloutRequest.EnvSpec("crafter-lite", "env-7", 42L, envConfig, null),
                new RolloutRequest.PolicySpec("openai", policyConfig),
                List.of("agent", "env", "agent", "env"),
                new RolloutRequest.RecordSpec(true, true, false, "compact", null),
                "terminate",
                new RolloutRequest.SafetySpec(100, 30.0),
                "rl", "session-9", "v12",
                Json.object().put("note", "hello"), null);
    }

    static RolloutResult fullResult() {
        ObjectNode obs = Json.object().put("position", 3);
        ObjectNode info = Json.object();
        info.putObject("meta").putObject("timing").put("inference_ms", 1.5).put("env_step_ms", 0.2);
        Step step = new Step(obs, List.of(Json.object().put("tool", "move").put("args", "right")), 1.0, true, false, info);
        return new RolloutResult(1, "run-1", "a-1f2e", "group-a", RolloutStatus.OK, new RolloutError("none", "fine"), false,
                List.of(new Trajectory("env-7", "openai", List.of(step), Json.object().put("position", 4), 1,
                        List.of(Json.object().put("decision_index", 1).put("r_i", 1.0)))),
                new RolloutMetrics(List.of(1.0), 1.0, 1, 1, Json.object()),
                2, Json.object().put("total_ms", 12), new WorkerInfo("worker-1", 3, 1234L), "v12",
                new CaptureInfo("main", true, List.of("c1", "c2"), false, List.of(), new Watermark(3, 99)), null);
    }

    static Stream<Object> everyRecord() {
        return Stream.of(
                fullRequest(),
                fullResult(),
                new TraceEvent("run-1", "a-1f2e", 4, TraceEvent.ENV_STEP, 1_700_000_000_000L, Json.object().put("reward", 1.0)),
                new CaptureEntry(1, "run-1", "a-1f2e", "c1", "main", "qwen3-8b", List.of(1, 2, 3), List.of(4, 5),
                        List.of(-0.1, -0.2), Json.object().put("content", "hi"), 1_700_000_000_000L, null),
                new FreezeCommand(1, "run-1", "a-1f2e", "snap-1", "collector-1", 1_700_000_000_000L, null),
                new RetireCommand(1, "run-1", "a-1f2e", "snap-1", 3, 1_700_000_000_000L, null),
                new AbortCommand("run-1", "operator asked", 1_700_000_000_000L),
                new DurablePointer(1, "run-1", "a-1f2e", RolloutStatus.OK, "/data/results-p3.jsonl", 120, 3, 1234, false,
                        null, "collector-1", null));
    }

    @ParameterizedTest
    @MethodSource("everyRecord")
    void everyRecordSurvivesAJsonRoundTrip(Object value) {
        byte[] bytes = Json.encode(value);
        Object back = Json.decode(bytes, value.getClass());
        assertThat(back).isEqualTo(value);
        assertThat(Json.encode(back)).isEqualTo(bytes);
    }

    @ParameterizedTest
    @MethodSource("everyRecord")
    void everyValueCarriesItsSchemaVersionInSnakeCase(Object value) throws Exception {
        JsonNode tree = Json.mapper().readTree(Json.encode(value));
        assertThat(tree.get("schema_version").asInt()).isEqualTo(SchemaVersion.CURRENT);
        tree.fieldNames().forEachRemaining(name -> assertThat(name).matches("[a-z0-9_]+"));
    }

    @Test
    void unknownFieldsAreKeptAndWrittenBack() throws Exception {
        String json = """
                {"schema_version":1,"run_id":"r1","future_field":{"x":[1,2]},
                 "env":{"env_name":"corridor","env_future":"kept","config":{"env_params":{"max_steps_per_episode":3},"other":true}},
                 "policy":{"policy_name":"scripted","policy_future":5},
                 "safety":{"max_ops":5,"safety_future":"s"}}
                """;
        RolloutRequest request = Json.decode(json, RolloutRequest.class);
        assertThat(request.extra()).containsKey("future_field");
        assertThat(request.env().extra()).containsKey("env_future");
        JsonNode back = Json.mapper().readTree(Json.encode(request));
        assertThat(back.at("/future_field/x/1").asInt()).isEqualTo(2);
        assertThat(back.at("/env/env_future").asText()).isEqualTo("kept");
        assertThat(back.at("/env/config/other").asBoolean()).isTrue();
        assertThat(back.at("/policy/policy_future").asInt()).isEqualTo(5);
        assertThat(back.at("/safety/safety_future").asText()).isEqualTo("s");

        RolloutResult result = Json.decode("{\"run_id\":\"r1\",\"status\":\"ok\",\"tokens\":[1,2,3]}", RolloutResult.class);
        assertThat(Json.mapper().readTree(Json.encode(result)).at("/tokens/2").asInt()).isEqualTo(3);
    }

    @Test
    void bytesThatAreNotJsonAreRefusedWithACode() {
        assertThatThrownBy(() -> Json.decode("{not json", RolloutRequest.class))
                .isInstanceOfSatisfying(WireFormatException.class, e -> assertThat(e.code()).isEqualTo("not_json"));
        assertThatThrownBy(() -> Json.decode(new byte[0], RolloutRequest.class))
                .isInstanceOfSatisfying(WireFormatException.class, e -> assertThat(e.code()).isEqualTo("empty_value"));
        assertThatThrownBy(() -> Json.decode((byte[]) null, RolloutRequest.class))
                .isInstanceOfSatisfying(WireFormatException.class, e -> assertThat(e.code()).isEqualTo("empty_value"));
        assertThatThrownBy(() -> Json.decode("null", RolloutRequest.class))
                .isInstanceOfSatisfying(WireFormatException.class, e -> assertThat(e.code()).isEqualTo("empty_value"));
        assertThatThrownBy(() -> Json.decode("{\"run_id\":\"a\"} trailing", RolloutRequest.class))
                .isInstanceOf(WireFormatException.class);
    }

    @Test
    void aValueOfTheWrongTypeIsRefusedNamingTheField() {
        assertThatThrownBy(() -> Json.decode("{\"run_id\":5}", RolloutRequest.class))
                .isInstanceOfSatisfying(WireFormatException.class, e -> {
                    assertThat(e.code()).isEqualTo("wrong_type");
                    assertThat(e.getMessage()).startsWith("run_id has the wrong type");
                });
        assertThatThrownBy(() -> Json.decode("{\"run_id\":\"r\",\"env\":{\"seed\":\"abc\"}}", RolloutRequest.class))
                .isInstanceOfSatisfying(WireFormatException.class, e -> assertThat(e.getMessage()).startsWith("env.seed has the wrong type"));
        assertThatThrownBy(() -> Json.decode("{\"run_id\":\"r\",\"ops\":\"agent\"}", RolloutRequest.class))
                .isInstanceOf(WireFormatException.class);
        assertThatThrownBy(() -> Json.decode("[1,2]", RolloutRequest.class)).isInstanceOf(WireFormatException.class);
    }
}
