package dev.rolloutfleet.ops;

import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.wire.DurablePointer;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.WireFormatException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * Follows {@code rollout.durable} from its beginning, without a consumer group, and keeps the
 * first pointer of each awaited run id. Confined to one thread.
 */
final class DurableFollower implements AutoCloseable {

    private final KafkaConsumer<String, byte[]> consumer;
    private final Set<String> awaited;
    private final Map<String, DurablePointer> durable = new HashMap<>();

    DurableFollower(KafkaConnection kafka, String durableTopic, Set<String> awaited) {
        this.consumer = kafka.consumer(null, "fleet-durable-follower");
        this.awaited = awaited;
        List<TopicPartition> partitions = consumer.partitionsFor(durableTopic).stream()
                .map(info -> new TopicPartition(durableTopic, info.partition())).toList();
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
    }

    /** Reads what arrived within {@code timeout}; returns how many awaited runs are durable so far. */
    int poll(Duration timeout) {
        for (ConsumerRecord<String, byte[]> record : consumer.poll(timeout)) {
            try {
                DurablePointer pointer = Json.decode(record.value(), DurablePointer.class);
                if (awaited.contains(pointer.runId())) {
                    durable.putIfAbsent(pointer.runId(), pointer);
                }
            } catch (WireFormatException e) {
                // Not ours to judge here; the collector publishes only well-formed pointers.
            }
        }
        return durable.size();
    }

    int durableCount() {
        return durable.size();
    }

    Map<String, DurablePointer> pointers() {
        return Map.copyOf(durable);
    }

    int maskedCount() {
        return (int) durable.values().stream().filter(DurablePointer::masked).count();
    }

    Map<RolloutStatus, Integer> statusCounts() {
        Map<RolloutStatus, Integer> counts = new EnumMap<>(RolloutStatus.class);
        durable.values().forEach(p -> counts.merge(p.status() == null ? RolloutStatus.FAILED : p.status(), 1, Integer::sum));
        return counts;
    }

    @Override
    public void close() {
        consumer.close();
    }
}
