package dev.rolloutfleet.worker.reward;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rolloutfleet.common.wire.RolloutRequest;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The {@code step_rewards} settings of a request, read as the seed task app reads them:
 * {@code policy.config.step_rewards} first, {@code env.config.step_rewards} when the policy has
 * none. Active only when {@code enabled} and {@code mode} is {@code decision_stepwise}.
 */
public record StepRewardConfig(
        boolean enabled,
        String mode,
        String strategy,
        Map<String, Double> weights,
        Map<String, Integer> kLimits,
        double indicatorLambda,
        double stepBeta) {

    public static final String CONSISTENT = "consistent";
    public static final String PER_ACHIEVEMENT = "per_achievement";

    public boolean active() {
        return enabled && "decision_stepwise".equals(mode);
    }

    public static StepRewardConfig of(RolloutRequest request) {
        JsonNode raw = section(request.policy() == null ? null : request.policy().config());
        if (raw == null) {
            raw = section(request.env() == null ? null : request.env().config());
        }
        if (raw == null) {
            return new StepRewardConfig(false, "off", CONSISTENT, Map.of(), Map.of(), 0, 0);
        }
        Map<String, Double> weights = new LinkedHashMap<>();
        raw.path("weights").fields().forEachRemaining(e -> {
            if (e.getValue().isNumber() || isNumeric(e.getValue())) {
                weights.put(e.getKey(), e.getValue().asDouble());
            }
        });
        Map<String, Integer> limits = new LinkedHashMap<>();
        raw.path("k_limits").fields().forEachRemaining(e -> {
            if (e.getValue().isNumber() || isNumeric(e.getValue())) {
                limits.put(e.getKey(), (int) e.getValue().asDouble());
            }
        });
        String mode = raw.path("mode").isTextual() && !raw.get("mode").asText().isEmpty()
                ? raw.get("mode").asText().toLowerCase(Locale.ROOT) : "off";
        return new StepRewardConfig(truthy(raw.get("enabled")), mode, normalizeStrategy(raw.get("strategy")), weights, limits,
                number(raw.get("indicator_lambda")), number(raw.get("step_beta")));
    }

    /** The seed's aliases: {@code simple}, {@code consistent_stepwise}, … → consistent; {@code complex}, … → per_achievement. */
    static String normalizeStrategy(JsonNode raw) {
        if (raw == null || !raw.isTextual()) {
            return CONSISTENT;
        }
        return switch (raw.asText().strip().toLowerCase(Locale.ROOT)) {
            case "per_achievement", "per-achievement", "perachievement", "achievement_weighted", "complex" -> PER_ACHIEVEMENT;
            default -> CONSISTENT;
        };
    }

    private static JsonNode section(JsonNode config) {
        JsonNode section = config == null ? null : config.get("step_rewards");
        return section != null && section.isObject() && !section.isEmpty() ? section : null;
    }

    private static boolean truthy(JsonNode value) {
        if (value == null || value.isNull()) {
            return false;
        }
        if (value.isBoolean()) {
            return value.asBoolean();
        }
        if (value.isNumber()) {
            return value.asDouble() != 0;
        }
        return value.isTextual() ? !value.asText().isEmpty() : !value.isEmpty();
    }

    private static double number(JsonNode value) {
        return value == null || value.isNull() ? 0 : value.asDouble(0);
    }

    private static boolean isNumeric(JsonNode value) {
        if (!value.isTextual()) {
            return false;
        }
        try {
            Double.parseDouble(value.asText());
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
