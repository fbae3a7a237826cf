package dev.rolloutfleet.worker.policy;

import dev.rolloutfleet.common.wire.RolloutRequest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The policies a worker can run, by name. Immutable after construction; thread-safe. */
public final class Policies {

    private final Map<String, PolicyFactory> byName;

    public Policies(List<PolicyFactory> factories) {
        Map<String, PolicyFactory> map = new LinkedHashMap<>();
        for (PolicyFactory factory : factories) {
            if (map.putIfAbsent(factory.name(), factory) != null) {
                throw new IllegalArgumentException("two policies are named \"" + factory.name() + "\"");
            }
        }
        this.byName = Map.copyOf(map);
    }

    public static Policies builtIn() {
        return new Policies(List.of(new ScriptedPolicy.Factory(), new OpenAiPolicy.Factory()));
    }

    public Optional<PolicyFactory> find(RolloutRequest.PolicySpec spec) {
        return Optional.ofNullable(byName.get(spec.policyName()));
    }

    public List<String> names() {
        return byName.keySet().stream().sorted().toList();
    }
}
