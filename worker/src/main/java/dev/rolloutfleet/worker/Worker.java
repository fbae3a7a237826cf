package dev.rolloutfleet.worker;

import com.codahale.metrics.MetricRegistry;
import dev.rolloutfleet.worker.env.Environments;
import dev.rolloutfleet.worker.internal.WorkerEngine;
import dev.rolloutfleet.worker.policy.Policies;
import dev.rolloutfleet.worker.rollout.RolloutRunner;
import java.time.Clock;

/**
 * A rollout worker: consumes its group's share of {@code rollout.requests}, runs up to
 * {@code maxInflight} rollouts at once on virtual threads, publishes trace events and a result for
 * each, and commits a request's offset only once its outputs are on the broker. {@link #start}
 * returns at once. {@link #close()} stops taking work, gives running rollouts the revoke grace to
 * finish, commits, and cancels the rest (the next owner runs them).
 */
public final class Worker implements AutoCloseable {

    private final WorkerEngine engine;

    private Worker(WorkerEngine engine) {
        this.engine = engine;
    }

    public static Worker start(WorkerConfig config, MetricRegistry registry) {
        return start(config, registry, Environments.builtIn(), Policies.builtIn());
    }

    public static Worker start(WorkerConfig config, MetricRegistry registry, Environments environments, Policies policies) {
        RolloutRunner runner = new RolloutRunner(environments, policies, Clock.systemUTC());
        return new Worker(WorkerEngine.start(config, registry, runner));
    }

    /** True once the worker owns a request partition and listens for aborts; feeds {@code /readyz}. */
    public boolean isReady() {
        return engine.isReady();
    }

    public boolean isRunning() {
        return engine.isRunning();
    }

    /** Waits until the worker stops (on {@link #close()} or a fatal consumer error). */
    public void awaitTermination() throws InterruptedException {
        engine.awaitTermination();
    }

    @Override
    public void close() {
        engine.close();
    }
}
