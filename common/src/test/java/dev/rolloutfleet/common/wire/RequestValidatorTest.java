package dev.rolloutfleet.common.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RequestValidatorTest {

    private static final String VALID = """
            {"run_id":"r-1","env":{"env_name":"corridor","config":{"env_params":{"max_steps_per_episode":5}}},
             "policy":{"policy_name":"scripted"},"ops":["agent","env"],"on_done":"reset","mode":"rl",
             "safety":{"max_ops":10,"max_time_s":2.5}}
            """;

    @Test
    void aWellFormedRequestPasses() {
        RolloutRequest request = Json.decode(VALID, RolloutRequest.class);
        assertThat(RequestValidator.validate(request)).isEmpty();
        assertThat(RequestValidator.maxStepsPerEpisode(request.env())).isEqualTo(5);
    }

    @Test
    void maxStepsDefaultsToTwentyWhenAbsent() {
        RolloutRequest request = Json.decode("{\"run_id\":\"r\",\"env\":{\"env_name\":\"e\"},\"policy\":{\"policy_name\":\"p\"}}",
                RolloutRequest.class);
        assertThat(RequestValidator.validate(request)).isEmpty();
        assertThat(RequestValidator.maxStepsPerEpisode(request.env())).isEqualTo(20);
    }

    static Stream<Arguments> brokenRules() {
        return Stream.of(
                Arguments.of("\"max_steps_per_episode\":5", "\"max_steps_per_episode\":-3", "invalid_env_params",
                        "env.config.env_params.max_steps_per_episode must be a positive integer, got -3"),
                Arguments.of("\"max_steps_per_episode\":5", "\"max_steps_per_episode\":0", "invalid_env_params",
                        "env.config.env_params.max_steps_per_episode must be a positive integer, got 0"),
                Arguments.of("\"max_steps_per_episode\":5", "\"max_steps_per_episode\":2.5", "invalid_env_params",
                        "env.config.env_params.max_steps_per_episode must be a positive integer, got 2.5"),
                Arguments.of("\"max_steps_per_episode\":5", "\"max_steps_per_episode\":\"ten\"", "invalid_env_params",
                        "env.config.env_params.max_steps_per_episode must be a positive integer, got \"ten\""),
                Arguments.of("{\"max_steps_per_episode\":5}", "[5]", "invalid_env_params",
                        "env.config.env_params must be an object, got [5]"),
                Arguments.of("\"run_id\":\"r-1\"", "\"run_id\":\"\"", "invalid_request", "run_id is required"),
                Arguments.of("\"run_id\":\"r-1\",", "", "invalid_request", "run_id is required"),
                Arguments.of("\"run_id\":\"r-1\"", "\"run_id\":\"a/b\"", "invalid_request",
                        "run_id may hold only letters, digits and . _ : -, got \"a/b\""),
                Arguments.of("\"run_id\":\"r-1\"", "\"run_id\":\"" + "x".repeat(201) + "\"", "invalid_request",
                        "run_id must be at most 200 characters, got 201"),
                Arguments.of("\"run_id\":\"r-1\"", "\"run_id\":\"r-1\",\"group_id\":\"g h\"", "invalid_request",
                        "group_id may hold only letters, digits and . _ : -, got \"g h\""),
                Arguments.of("[\"agent\",\"env\"]", "[\"agent\",\"jump\"]", "invalid_request",
                        "ops[1] must be \"agent\" or \"env\", got \"jump\""),
                Arguments.of("\"on_done\":\"reset\"", "\"on_done\":\"restart\"", "invalid_request",
                        "on_done must be \"reset\" or \"terminate\", got \"restart\""),
                Arguments.of("\"mode\":\"rl\"", "\"mode\":\"train\"", "invalid_request",
                        "mode must be \"rl\" or \"eval\", got \"train\""),
                Arguments.of("\"max_ops\":10", "\"max_ops\":0", "invalid_request",
                        "safety.max_ops must be a positive integer, got 0"),
                Arguments.of("\"max_time_s\":2.5", "\"max_time_s\":-1.0", "invalid_request",
                        "safety.max_time_s must be a positive number of seconds, got -1.0"),
                Arguments.of("\"policy\":{\"policy_name\":\"scripted\"},", "", "invalid_request",
                        "policy is required (an object with policy_name)"),
                Arguments.of("\"env_name\":\"corridor\",", "", "invalid_request", "env.env_name is required"),
                Arguments.of("\"run_id\":\"r-1\"", "\"run_id\":\"r-1\",\"schema_version\":99", "unsupported_schema_version",
                        "schema_version must be between 1 and 1, got 99"));
    }

    @ParameterizedTest(name = "{3}")
    @MethodSource("brokenRules")
    void eachRuleRejectsWithAMessageNamingFieldRuleAndValue(String from, String to, String code, String message) {
        assertThat(VALID).contains(from);
        RolloutRequest request = Json.decode(VALID.replace(from, to), RolloutRequest.class);
        assertThatThrownBy(() -> RequestValidator.check(request))
                .isInstanceOfSatisfying(InvalidRequestException.class, e -> {
                    assertThat(e.code()).isEqualTo(code);
                    assertThat(e.getMessage()).isEqualTo(message);
                });
    }

    @Test
    void everyBrokenRuleIsListedNotOnlyTheFirst() {
        RolloutRequest request = Json.decode("{\"run_id\":\"a b\",\"on_done\":\"x\",\"env\":{\"env_name\":\"e\"},"
                + "\"policy\":{\"policy_name\":\"p\"}}", RolloutRequest.class);
        assertThat(RequestValidator.validate(request)).extracting(RequestValidator.Violation::field)
                .containsExactly("run_id", "on_done");
    }
}
