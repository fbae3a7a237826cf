package dev.rolloutfleet.common.wire;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The rules a {@link RolloutRequest} must follow beyond its JSON shape. Every message names the
 * field, the rule and what was received, so the trainer who sent it can fix it without reading
 * this code. Stateless and thread-safe.
 */
public final class RequestValidator {

    /** Error code of a request that breaks a general rule. */
    public static final String INVALID_REQUEST = "invalid_request";
    /** Error code of a request whose {@code env.config.env_params} are unusable. */
    public static final String INVALID_ENV_PARAMS = "invalid_env_params";
    /** Error code of a request written for a newer contract than this worker reads. */
    public static final String UNSUPPORTED_SCHEMA_VERSION = "unsupported_schema_version";

    public static final int MAX_ID_LENGTH = 200;
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9._:-]+");

    /** One broken rule. */
    public record Violation(String code, String field, String message) {}

    private RequestValidator() {}

    /** Throws {@link InvalidRequestException} listing every broken rule, or returns the request. */
    public static RolloutRequest check(RolloutRequest request) {
        List<Violation> violations = validate(request);
        if (!violations.isEmpty()) {
            throw new InvalidRequestException(violations);
        }
        return request;
    }

    public static List<Violation> validate(RolloutRequest request) {
        List<Violation> out = new ArrayList<>();
        if (request.schemaVersion() != null
                && (request.schemaVersion() < 1 || request.schemaVersion() > SchemaVersion.CURRENT)) {
            out.add(new Violation(UNSUPPORTED_SCHEMA_VERSION, "schema_version",
                    "schema_version must be between 1 and " + SchemaVersion.CURRENT + ", got " + request.schemaVersion()));
        }
        checkId(out, "run_id", request.runId(), true);
        checkId(out, "group_id", request.groupId(), false);

        if (request.env() == null) {
            out.add(invalid("env", "env is required (an object with env_name)"));
        } else {
            if (isBlank(request.env().envName()) && isBlank(request.env().envId())) {
                out.add(invalid("env.env_name", "env.env_name is required"));
            }
            checkMaxSteps(out, request.env());
        }
        if (request.policy() == null) {
            out.add(invalid("policy", "policy is required (an object with policy_name)"));
        } else if (isBlank(request.policy().policyName())) {
            out.add(invalid("policy.policy_name", "policy.policy_name is required"));
        }
        if (request.ops() != null) {
            for (int i = 0; i < request.ops().size(); i++) {
                String op = request.ops().get(i);
                if (!"agent".equals(op) && !"env".equals(op)) {
                    out.add(invalid("ops[" + i + "]", "ops[" + i + "] must be \"agent\" or \"env\", got " + quote(op)));
                }
            }
        }
        if (request.onDone() != null
                && !RolloutRequest.ON_DONE_RESET.equals(request.onDone())
                && !RolloutRequest.ON_DONE_TERMINATE.equals(request.onDone())) {
            out.add(invalid("on_done", "on_done must be \"reset\" or \"terminate\", got " + quote(request.onDone())));
        }
        if (request.mode() != null && !"rl".equals(request.mode()) && !"eval".equals(request.mode())) {
            out.add(invalid("mode", "mode must be \"rl\" or \"eval\", got " + quote(request.mode())));
        }
        if (request.safety() != null) {
            Integer maxOps = request.safety().maxOps();
            if (maxOps != null && maxOps <= 0) {
                out.add(invalid("safety.max_ops", "safety.max_ops must be a positive integer, got " + maxOps));
            }
            Double maxTime = request.safety().maxTimeS();
            if (maxTime != null && !(maxTime > 0 && Double.isFinite(maxTime))) {
                out.add(invalid("safety.max_time_s", "safety.max_time_s must be a positive number of seconds, got " + maxTime));
            }
        }
        return out;
    }

    /** {@code env.config.env_params.max_steps_per_episode}, or the default 20 when absent. Call after validation. */
    public static int maxStepsPerEpisode(RolloutRequest.EnvSpec env) {
        JsonNode value = maxStepsNode(env);
        return value == null || value.isNull() ? 20 : value.intValue();
    }

    private static void checkMaxSteps(List<Violation> out, RolloutRequest.EnvSpec env) {
        JsonNode config = env.config();
        if (config == null) {
            return;
        }
        JsonNode params = config.get("env_params");
        if (params != null && !params.isNull() && !params.isObject()) {
            out.add(new Violation(INVALID_ENV_PARAMS, "env.config.env_params",
                    "env.config.env_params must be an object, got " + params));
            return;
        }
        JsonNode value = maxStepsNode(env);
        if (value == null || value.isNull()) {
            return;
        }
        if (!value.canConvertToInt() || !value.isIntegralNumber() || value.intValue() <= 0) {
            out.add(new Violation(INVALID_ENV_PARAMS, "env.config.env_params.max_steps_per_episode",
                    "env.config.env_params.max_steps_per_episode must be a positive integer, got " + value));
        }
    }

    private static JsonNode maxStepsNode(RolloutRequest.EnvSpec env) {
        if (env == null || env.config() == null) {
            return null;
        }
        JsonNode params = env.config().get("env_params");
        return params == null || !params.isObject() ? null : params.get("max_steps_per_episode");
    }

    private static void checkId(List<Violation> out, String field, String value, boolean required) {
        if (value == null || value.isEmpty()) {
            if (required) {
                out.add(invalid(field, field + " is required"));
            }
            return;
        }
        if (value.length() > MAX_ID_LENGTH) {
            out.add(invalid(field, field + " must be at most " + MAX_ID_LENGTH + " characters, got " + value.length()));
        } else if (!ID.matcher(value).matches()) {
            out.add(invalid(field, field + " may hold only letters, digits and . _ : -, got " + quote(value)));
        }
    }

    private static Violation invalid(String field, String message) {
        return new Violation(INVALID_REQUEST, field, message);
    }

    private static boolean isBlank(String s) {
        return s == null || s.isBlank();
    }

    private static String quote(String s) {
        return s == null ? "null" : "\"" + s + "\"";
    }
}
