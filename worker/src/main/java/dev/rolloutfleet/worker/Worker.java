package dev.rolloutfleet.worker;

import com.codahale.metrics.MetricRegistry;
import dev.rolloutfleet.worker.env.Environments;
import dev.rolloutfleet.worker.internal.RequestConsumerLoop;
import dev.rolloutfleet.worker.policy.Policies;
import dev.rolloutfleet.worker.rollout.RolloutRunner;
import java.time.Clock;
import java.time.Duration;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * A rollout worker: consumes requests from its group's share of {@code rollout.requests}, runs
 * each rollout, publishes trace events and a result, and commits a request's offset only once its
 * outputs are on the broker. {@link #start} returns at once; the work runs on a thread of its own.
 * {@link #close()} stops polling and closes the clients.
 */
public final class Worker implements AutoCloseable {

    private final RequestConsumerLoop loop;
    private final Thread thread;
    private final KafkaProducer<String, byte[]> producer;

    private Worker(RequestConsumerLoop loop, Thread thread, KafkaProducer<String, byte[]> producer) {
        this.loop = loop;
        this.thread = thread;
        this.producer = producer;
    }

    public static Worker start(WorkerConfig config, MetricRegistry registry) {
        return start(config, registry, Environments.builtIn(), Policies.builtIn());
    }

    public static Worker start(WorkerConfig config, MetricRegistry registry, Environments environments, Policies policies) {
        KafkaProducer<String, byte[]> producer = config.kafka().producer(config.workerId() + "-out");
        KafkaConsumer<String, byte[]> consumer = config.kafka().consumer(config.groupId(), config.workerId());
        RolloutRunner runner = new RolloutRunner(environments, policies, Clock.systemUTC());
        RequestConsumerLoop loop = new RequestConsumerLoop(consumer, producer, config, runner, registry, Clock.systemUTC());
        Thread thread = new Thread(loop, "worker-" + config.workerId());
        thread.start();
        return new Worker(loop, thread, producer);
    }

    /** True once the worker owns at least one request partition; feeds {@code /readyz}. */
    public boolean isReady() {
        return loop.isAssigned() && thread.isAlive();
    }

    public boolean isRunning() {
        return thread.isAlive();
    }

    /** Waits until the worker stops (it only stops on {@link #close()} or a fatal error). */
    public void awaitTermination() throws InterruptedException {
        thread.join();
    }

    @Override
    public void close() {
        loop.stop();
        try {
            thread.join(Duration.ofSeconds(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        producer.close(Duration.ofSeconds(10));
    }
}
