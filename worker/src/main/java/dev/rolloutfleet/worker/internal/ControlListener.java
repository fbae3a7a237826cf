package dev.rolloutfleet.worker.internal;

import dev.rolloutfleet.common.wire.AbortCommand;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.WireFormatException;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads {@code rollout.control} from its end, without a consumer group, so every worker sees
 * every abort issued while it runs, and hands each abort to the {@link AbortRegistry}. Runs on
 * its own thread, the only one that touches its consumer; {@link #stop()} may be called from any.
 */
final class ControlListener implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(ControlListener.class);

    private final Consumer<String, byte[]> consumer;
    private final String topic;
    private final AbortRegistry registry;
    private volatile boolean running = true;
    private volatile boolean ready;

    ControlListener(Consumer<String, byte[]> consumer, String topic, AbortRegistry registry) {
        this.consumer = consumer;
        this.topic = topic;
        this.registry = registry;
    }

    @Override
    public void run() {
        try {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            // Resolve the end positions now, so every abort published after readiness is seen.
            partitions.forEach(consumer::position);
            ready = true;
            while (running) {
                for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    try {
                        AbortCommand abort = Json.decode(record.value(), AbortCommand.class);
                        if (abort.runId() == null) {
                            throw new WireFormatException("missing_run_id", "the abort has no run_id");
                        }
                        log.info("abort for run {}: {}", abort.runId(), abort.reason());
                        registry.abort(abort.runId(), abort.reason());
                    } catch (WireFormatException e) {
                        log.warn("ignoring unreadable control record at {}-{}@{}: {}", record.topic(), record.partition(),
                                record.offset(), e.getMessage());
                    }
                }
            }
        } catch (WakeupException e) {
            if (running) {
                throw e;
            }
        } finally {
            consumer.close();
        }
    }

    boolean isReady() {
        return ready;
    }

    void stop() {
        running = false;
        consumer.wakeup();
    }
}
