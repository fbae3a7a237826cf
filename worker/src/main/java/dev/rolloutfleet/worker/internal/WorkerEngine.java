package dev.rolloutfleet.worker.internal;

import com.codahale.metrics.MetricRegistry;
import dev.rolloutfleet.worker.WorkerConfig;
import dev.rolloutfleet.worker.rollout.RolloutRunner;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Wires a worker's parts: the request consumer loop, the control listener, one producer shared by
 * every rollout, and their threads. {@link #close()} stops polling, lets running rollouts finish
 * within the revoke grace, commits, and closes the clients.
 */
public final class WorkerEngine implements AutoCloseable {

    private static final int REMEMBERED_ABORTS = 100_000;

    private final RequestConsumerLoop loop;
    private final ControlListener control;
    private final Thread loopThread;
    private final Thread controlThread;
    private final KafkaProducer<String, byte[]> producer;

    private WorkerEngine(RequestConsumerLoop loop, ControlListener control, KafkaProducer<String, byte[]> producer,
            String workerId) {
        this.loop = loop;
        this.control = control;
        this.producer = producer;
        this.loopThread = new Thread(loop, "worker-" + workerId);
        this.controlThread = new Thread(control, "worker-control-" + workerId);
        this.controlThread.setDaemon(true);
    }

    public static WorkerEngine start(WorkerConfig config, MetricRegistry registry, RolloutRunner runner) {
        KafkaProducer<String, byte[]> producer = config.kafka().producer(config.workerId() + "-out");
        KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(requestConsumerConfig(config));
        KafkaConsumer<String, byte[]> controlConsumer = config.kafka().consumer(null, config.workerId() + "-control");
        AbortRegistry aborts = new AbortRegistry(REMEMBERED_ABORTS);
        RequestConsumerLoop loop = new RequestConsumerLoop(consumer, producer, config, runner, aborts, registry,
                Clock.systemUTC());
        ControlListener control = new ControlListener(controlConsumer, config.topics().control(), aborts);
        WorkerEngine engine = new WorkerEngine(loop, control, producer, config.workerId());
        engine.controlThread.start();
        engine.loopThread.start();
        return engine;
    }

    static Map<String, Object> requestConsumerConfig(WorkerConfig config) {
        Map<String, Object> props = config.kafka().consumerConfig(config.groupId(), config.workerId());
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, config.groupProtocol());
        if ("classic".equals(config.groupProtocol())) {
            props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        }
        if (config.groupInstanceId() != null && !config.groupInstanceId().isBlank()) {
            props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, config.groupInstanceId());
        }
        return props;
    }

    /** Owns a partition and listens for aborts. */
    public boolean isReady() {
        return loop.isAssigned() && control.isReady() && loopThread.isAlive();
    }

    public boolean isRunning() {
        return loopThread.isAlive();
    }

    public void awaitTermination() throws InterruptedException {
        loopThread.join();
    }

    @Override
    public void close() {
        loop.stop();
        control.stop();
        try {
            loopThread.join();
            controlThread.join(Duration.ofSeconds(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        producer.close(Duration.ofSeconds(30));
    }
}
