package dev.rolloutfleet.worker.reward;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Decision-level step rewards with the seed task app's semantics ({@code compute_stepwise_reward}):
 * an indicator for newly unlocked achievements; under {@code consistent} a reward of 1 when any
 * unlocks; under {@code per_achievement} each unlocked achievement's weight (default 1.0), at
 * most {@code k_limits} times per episode (default 1; ≤ 0 unlimited), plus resource rewards from
 * inventory and achievement-count gains with the seed's weights; all times
 * {@code indicator_lambda} (0 or missing means 1). Observations carry {@code achievements_status},
 * {@code inventory} and {@code achievements_counts}. One instance per rollout, on its thread.
 */
public final class StepRewards {

    private static final Map<String, Double> RESOURCE_WEIGHTS = Map.ofEntries(
            Map.entry("wood", 0.10), Map.entry("sapling", 0.08), Map.entry("stone", 0.15), Map.entry("coal", 0.18),
            Map.entry("iron", 0.22), Map.entry("plant", 0.06), Map.entry("meat", 0.12), Map.entry("drink", 0.07),
            Map.entry("food", 0.07), Map.entry("water", 0.07), Map.entry("energy", 0.04));
    private static final Map<String, Double> TOOL_WEIGHTS = Map.ofEntries(
            Map.entry("wood_pickaxe", 0.40), Map.entry("stone_pickaxe", 0.55), Map.entry("iron_pickaxe", 0.75),
            Map.entry("wood_sword", 0.35), Map.entry("stone_sword", 0.50), Map.entry("iron_sword", 0.70),
            Map.entry("furnace", 0.45), Map.entry("table", 0.30), Map.entry("bow", 0.45));
    private static final Map<String, Double> ACHIEVEMENT_COUNT_WEIGHTS = Map.ofEntries(
            Map.entry("collect_wood", 0.08), Map.entry("collect_sapling", 0.06), Map.entry("collect_stone", 0.10),
            Map.entry("collect_coal", 0.12), Map.entry("collect_iron", 0.14), Map.entry("collect_drink", 0.06),
            Map.entry("collect_food", 0.06), Map.entry("collect_plant", 0.06));
    private static final double DEFAULT_RESOURCE_WEIGHT = 0.05;
    private static final double DEFAULT_ACHIEVEMENT_WEIGHT = 0.05;

    /** What one decision earned: {@code info.stepwise}, {@code info.meta.decision_rewards}, and the decision sample. */
    public record Outcome(ObjectNode stepwise, ObjectNode decisionRewards, ObjectNode decisionSample, double reward) {}

    private final StepRewardConfig config;
    private Map<String, Boolean> prevAchievements = Map.of();
    private Map<String, Integer> prevInventory = Map.of();
    private Map<String, Integer> prevCounts = Map.of();
    private final Set<String> episodeSeen = new LinkedHashSet<>();
    private final Map<String, Integer> episodeCounts = new LinkedHashMap<>();
    private final List<ObjectNode> decisionSamples = new ArrayList<>();
    private double indicatorSum;
    private double rewardSum;
    private double resourceRewardSum;
    private int newAchievementsTotal;

    public StepRewards(StepRewardConfig config) {
        this.config = config;
    }

    /** The rollout's first observation. */
    public void start(JsonNode observation) {
        prevAchievements = achievements(observation);
        prevInventory = ints(observation, "inventory");
        prevCounts = ints(observation, "achievements_counts");
        episodeSeen.clear();
        prevAchievements.forEach((k, v) -> {
            if (v) {
                episodeSeen.add(k);
            }
        });
    }

    /** An episode reset: achievement tracking restarts; inventory and counts carry on, as in the seed. */
    public void reset(JsonNode observation) {
        prevAchievements = achievements(observation);
        episodeSeen.clear();
        prevAchievements.forEach((k, v) -> {
            if (v) {
                episodeSeen.add(k);
            }
        });
        episodeCounts.clear();
    }

    public Outcome step(int decisionIndex, ArrayNode actions, JsonNode observation) {
        Map<String, Boolean> next = achievements(observation);
        Map<String, Integer> nextInventory = ints(observation, "inventory");
        Map<String, Integer> nextCounts = ints(observation, "achievements_counts");
        List<String> unlocked = new ArrayList<>();
        next.forEach((name, value) -> {
            if (value && !prevAchievements.getOrDefault(name, false)) {
                unlocked.add(name);
            }
        });
        boolean fromAchievements = !unlocked.isEmpty();
        double base = 0;
        ArrayNode components = Json.mapper().createArrayNode();
        List<String> credited = new ArrayList<>();
        if (fromAchievements) {
            if (StepRewardConfig.PER_ACHIEVEMENT.equals(config.strategy())) {
                for (String name : unlocked) {
                    int limit = config.kLimits().getOrDefault(name, 1);
                    int prior = episodeCounts.getOrDefault(name, 0);
                    if (limit <= 0 || prior < Math.max(limit, 0)) {
                        double weight = config.weights().getOrDefault(name, 1.0);
                        base += weight;
                        components.add(Json.object().put("achievement", name).put("weight", weight)
                                .put("count_prior", prior).put("count_limit", limit));
                        credited.add(name);
                        episodeCounts.put(name, prior + 1);
                    }
                }
            } else {
                base = 1.0;
                components.add(Json.object().put("achievement", "__indicator__").put("weight", 1.0)
                        .put("count_prior", 0).put("count_limit", 1));
            }
        }
        double resource = 0;
        ObjectNode inventoryDeltas = Json.object();
        ObjectNode countDeltas = Json.object();
        if (StepRewardConfig.PER_ACHIEVEMENT.equals(config.strategy())) {
            for (Map.Entry<String, Integer> e : nextInventory.entrySet()) {
                int delta = e.getValue() - prevInventory.getOrDefault(e.getKey(), 0);
                if (delta <= 0) {
                    continue;
                }
                Double weight = RESOURCE_WEIGHTS.get(e.getKey());
                if (weight == null) {
                    weight = TOOL_WEIGHTS.getOrDefault(e.getKey(), DEFAULT_RESOURCE_WEIGHT);
                }
                resource += weight * delta;
                inventoryDeltas.put(e.getKey(), delta);
                components.add(Json.object().put("type", "inventory").put("item", e.getKey()).put("delta", delta)
                        .put("weight", weight).put("reward", weight * delta));
            }
            for (Map.Entry<String, Integer> e : nextCounts.entrySet()) {
                int delta = e.getValue() - prevCounts.getOrDefault(e.getKey(), 0);
                if (delta <= 0) {
                    continue;
                }
                double weight = ACHIEVEMENT_COUNT_WEIGHTS.getOrDefault(e.getKey(), DEFAULT_ACHIEVEMENT_WEIGHT);
                resource += weight * delta;
                countDeltas.put(e.getKey(), delta);
                components.add(Json.object().put("type", "achievement_count").put("name", e.getKey()).put("delta", delta)
                        .put("weight", weight).put("reward", weight * delta));
            }
            base += resource;
        }
        int indicator = base > 0 ? 1 : 0;
        if (indicator == 0 && fromAchievements) {
            indicator = 1;
        }
        double lambda = config.indicatorLambda() != 0 ? config.indicatorLambda() : 1.0;
        double reward = lambda * base;

        ObjectNode stepwise = Json.object().put("decision_index", decisionIndex).put("indicator", indicator);
        stepwise.set("new_achievements", strings(unlocked));
        stepwise.put("reward", reward).put("strategy", config.strategy()).put("base_reward", base);
        if (!components.isEmpty()) {
            stepwise.set("components", components);
        }
        if (!credited.isEmpty()) {
            stepwise.set("credited_achievements", strings(credited));
        }
        if (resource != 0) {
            stepwise.put("resource_reward", resource);
        }
        if (!inventoryDeltas.isEmpty()) {
            stepwise.set("inventory_deltas", inventoryDeltas);
        }
        if (!countDeltas.isEmpty()) {
            stepwise.set("achievement_count_deltas", countDeltas);
        }
        ObjectNode sample = Json.object().put("decision_index", decisionIndex).put("indicator", indicator).put("r_i", reward)
                .put("base", base).put("strategy", config.strategy());
        sample.set("actions", actions);
        if (!components.isEmpty()) {
            sample.set("components", components.deepCopy());
        }
        if (resource != 0) {
            sample.put("resource_reward", resource);
        }
        decisionSamples.add(sample);

        TreeSet<String> turnedTrue = new TreeSet<>(unlocked);
        TreeSet<String> unique = new TreeSet<>(turnedTrue);
        unique.removeAll(episodeSeen);
        ObjectNode decisionRewards = Json.object().put("turn", decisionIndex).put("ach_delta", turnedTrue.size())
                .put("unique_delta", unique.size());
        decisionRewards.set("all", strings(List.copyOf(turnedTrue)));
        decisionRewards.set("unique", strings(List.copyOf(unique)));
        episodeSeen.addAll(turnedTrue);

        indicatorSum += indicator;
        rewardSum += reward;
        resourceRewardSum += resource;
        newAchievementsTotal += unlocked.size();
        prevAchievements = next;
        prevInventory = nextInventory;
        prevCounts = nextCounts;
        return new Outcome(stepwise, decisionRewards, sample, reward);
    }

    public List<ObjectNode> decisionSamples() {
        return List.copyOf(decisionSamples);
    }

    /** {@code metrics.details.stepwise}: the rollout's totals. */
    public ObjectNode summary() {
        ObjectNode summary = Json.object().put("indicator_sum", indicatorSum).put("reward_sum", rewardSum)
                .put("resource_reward", resourceRewardSum).put("new_achievements_total", newAchievementsTotal)
                .put("mode", config.mode()).put("strategy", config.strategy()).put("indicator_lambda", config.indicatorLambda());
        if (config.stepBeta() != 0) {
            summary.put("step_beta", config.stepBeta());
        }
        if (StepRewardConfig.PER_ACHIEVEMENT.equals(config.strategy())) {
            if (!config.weights().isEmpty()) {
                summary.set("weights", Json.tree(config.weights()));
            }
            if (!config.kLimits().isEmpty()) {
                summary.set("k_limits", Json.tree(config.kLimits()));
            }
        }
        // The seed reports the last episode's unique achievements (its seen set is reset per episode).
        summary.put("unique_achievements_total", episodeSeen.size());
        summary.set("unique_achievements", strings(List.copyOf(new TreeSet<>(episodeSeen))));
        TreeSet<String> finals = new TreeSet<>();
        prevAchievements.forEach((k, v) -> {
            if (v) {
                finals.add(k);
            }
        });
        summary.set("final_achievements", strings(List.copyOf(finals)));
        return summary;
    }

    private static Map<String, Boolean> achievements(JsonNode observation) {
        Map<String, Boolean> out = new LinkedHashMap<>();
        JsonNode status = observation == null ? null : observation.get("achievements_status");
        if (status != null && status.isObject()) {
            status.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asBoolean()));
        }
        return out;
    }

    private static Map<String, Integer> ints(JsonNode observation, String field) {
        Map<String, Integer> out = new LinkedHashMap<>();
        JsonNode node = observation == null ? null : observation.get(field);
        if (node != null && node.isObject()) {
            node.fields().forEachRemaining(e -> {
                JsonNode v = e.getValue();
                if (v.isBoolean()) {
                    out.put(e.getKey(), v.asBoolean() ? 1 : 0);
                } else if (v.isNumber() || (v.isTextual() && v.asText().matches("-?\\d+(\\.\\d+)?"))) {
                    out.put(e.getKey(), (int) v.asDouble());
                }
            });
        }
        return out;
    }

    private static ArrayNode strings(List<String> values) {
        ArrayNode array = Json.mapper().createArrayNode();
        values.forEach(array::add);
        return array;
    }
}
