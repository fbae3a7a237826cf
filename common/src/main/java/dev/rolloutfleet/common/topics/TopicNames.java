package dev.rolloutfleet.common.topics;

import java.util.List;

/**
 * The names of the fleet's topics under one prefix (e.g. {@code team-a.} gives
 * {@code team-a.rollout.requests}). An empty prefix gives the default names of DESIGN §4.
 */
public record TopicNames(String prefix) {

    public TopicNames {
        prefix = prefix == null ? "" : prefix;
        if (!prefix.isEmpty() && !prefix.matches("[A-Za-z0-9._-]+")) {
            throw new IllegalArgumentException("topic prefix may hold only letters, digits and . _ -, got \"" + prefix + "\"");
        }
    }

    public static TopicNames defaults() {
        return new TopicNames("");
    }

    public String requests() {
        return prefix + "rollout.requests";
    }

    public String results() {
        return prefix + "rollout.results";
    }

    public String traces() {
        return prefix + "rollout.traces";
    }

    public String tokenCapture() {
        return prefix + "rollout.token-capture";
    }

    public String control() {
        return prefix + "rollout.control";
    }

    public String durable() {
        return prefix + "rollout.durable";
    }

    public String requestsDlq() {
        return prefix + "rollout.requests.dlq";
    }

    public List<String> all() {
        return List.of(requests(), results(), traces(), tokenCapture(), control(), durable(), requestsDlq());
    }
}
