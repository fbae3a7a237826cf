package dev.rolloutfleet.worker.env;

import dev.rolloutfleet.common.wire.RolloutRequest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The environments a worker can run, by name. Immutable after construction; thread-safe. */
public final class Environments {

    private final Map<String, EnvironmentFactory> byName;

    public Environments(List<EnvironmentFactory> factories) {
        Map<String, EnvironmentFactory> map = new LinkedHashMap<>();
        for (EnvironmentFactory factory : factories) {
            if (map.putIfAbsent(factory.name(), factory) != null) {
                throw new IllegalArgumentException("two environments are named \"" + factory.name() + "\"");
            }
        }
        this.byName = Map.copyOf(map);
    }

    /** The environments that ship with the worker. */
    public static Environments builtIn() {
        return new Environments(List.of(new CorridorEnvironment.Factory(), new MathEnvironment.Factory(), new CrafterLite.Factory(),
                new HttpEnvironment.Factory()));
    }

    public Optional<EnvironmentFactory> find(RolloutRequest.EnvSpec spec) {
        return Optional.ofNullable(byName.get(spec.envName()));
    }

    public List<String> names() {
        return byName.keySet().stream().sorted().toList();
    }
}
