package dev.rolloutfleet.ops;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.TopicPartition;

/**
 * Part of a topic: per partition, the offsets {@code [from, to)}. Bounds come from offsets
 * ({@code PARTITION:OFFSET}, or a bare {@code OFFSET} for every partition), from timestamps, or
 * default to the topic's beginning and its end as of {@link #resolve}.
 */
record TopicSlice(String topic, Map<Integer, Long> from, Map<Integer, Long> to) {

    TopicSlice {
        from = Map.copyOf(from);
        to = Map.copyOf(to);
    }

    /** The whole topic as it is now. */
    static TopicSlice whole(KafkaConsumer<?, ?> consumer, String topic) {
        return resolve(consumer, topic, List.of(), List.of(), null, null);
    }

    /**
     * Resolves the bounds against the topic. Offsets win over times for the same end; an offset
     * past the end is clamped to the end; a time after the last record selects nothing.
     */
    static TopicSlice resolve(KafkaConsumer<?, ?> consumer, String topic, List<String> fromOffsets, List<String> toOffsets,
            Instant fromTime, Instant toTime) {
        List<TopicPartition> partitions = partitions(consumer, topic);
        Map<TopicPartition, Long> beginnings = consumer.beginningOffsets(partitions);
        Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
        Map<Integer, Long> from = new TreeMap<>();
        Map<Integer, Long> to = new TreeMap<>();
        Map<Integer, Long> fromTimes = fromTime == null ? Map.of() : offsetsAt(consumer, partitions, fromTime, ends);
        Map<Integer, Long> toTimes = toTime == null ? Map.of() : offsetsAt(consumer, partitions, toTime, ends);
        Map<Integer, Long> fromGiven = parseOffsets(fromOffsets, topic, partitions.size());
        Map<Integer, Long> toGiven = parseOffsets(toOffsets, topic, partitions.size());
        for (TopicPartition tp : partitions) {
            int p = tp.partition();
            long begin = beginnings.get(tp);
            long end = ends.get(tp);
            long lo = fromGiven.getOrDefault(p, fromTimes.getOrDefault(p, begin));
            long hi = toGiven.getOrDefault(p, toTimes.getOrDefault(p, end));
            from.put(p, Math.max(begin, Math.min(lo, end)));
            to.put(p, Math.max(begin, Math.min(hi, end)));
        }
        return new TopicSlice(topic, from, to);
    }

    /** Reads every record of the slice into {@code sink}, partition by partition in offset order. */
    <K, V> void read(KafkaConsumer<K, V> consumer, Consumer<ConsumerRecord<K, V>> sink) {
        Map<TopicPartition, Long> remaining = new HashMap<>();
        from.forEach((p, lo) -> {
            if (lo < to.get(p)) {
                remaining.put(new TopicPartition(topic, p), to.get(p));
            }
        });
        consumer.assign(remaining.keySet());
        remaining.keySet().forEach(tp -> consumer.seek(tp, from.get(tp.partition())));
        while (!remaining.isEmpty()) {
            for (ConsumerRecord<K, V> record : consumer.poll(Duration.ofMillis(200))) {
                Long end = remaining.get(new TopicPartition(record.topic(), record.partition()));
                if (end != null && record.offset() < end) {
                    sink.accept(record);
                }
            }
            // Positions skip compacted gaps and transaction markers, so they, not record offsets, say when a partition is done.
            remaining.entrySet().removeIf(e -> consumer.position(e.getKey()) >= e.getValue());
            consumer.pause(consumer.assignment().stream().filter(tp -> !remaining.containsKey(tp)).toList());
        }
        // Pauses outlive a re-assignment of the same partitions; leave the consumer as it was given.
        consumer.resume(consumer.assignment());
    }

    static List<TopicPartition> partitions(KafkaConsumer<?, ?> consumer, String topic) {
        var infos = consumer.partitionsFor(topic);
        if (infos == null || infos.isEmpty()) {
            throw new IllegalArgumentException("topic " + topic + " does not exist (wrong --topic-prefix or --bootstrap-servers?)");
        }
        return infos.stream().map(info -> new TopicPartition(topic, info.partition())).sorted(
                Comparator.comparingInt(TopicPartition::partition)).toList();
    }

    private static Map<Integer, Long> offsetsAt(KafkaConsumer<?, ?> consumer, List<TopicPartition> partitions, Instant time,
            Map<TopicPartition, Long> ends) {
        Map<TopicPartition, Long> query = new HashMap<>();
        partitions.forEach(tp -> query.put(tp, time.toEpochMilli()));
        Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(query);
        Map<Integer, Long> offsets = new HashMap<>();
        for (TopicPartition tp : partitions) {
            OffsetAndTimestamp at = found.get(tp);
            offsets.put(tp.partition(), at == null ? ends.get(tp) : at.offset());
        }
        return offsets;
    }

    /** {@code P:O} sets partition P; a bare {@code O} sets every partition not named explicitly. */
    static Map<Integer, Long> parseOffsets(List<String> specs, String topic, int partitionCount) {
        Map<Integer, Long> explicit = new HashMap<>();
        Long everywhere = null;
        for (String spec : specs) {
            try {
                int colon = spec.indexOf(':');
                if (colon < 0) {
                    everywhere = Long.parseLong(spec.trim());
                    continue;
                }
                int partition = Integer.parseInt(spec.substring(0, colon).trim());
                if (partition < 0 || partition >= partitionCount) {
                    throw new IllegalArgumentException("partition " + partition + " in '" + spec + "' is not one of "
                            + topic + "'s " + partitionCount + " partitions");
                }
                explicit.put(partition, Long.parseLong(spec.substring(colon + 1).trim()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("offset '" + spec + "' is neither PARTITION:OFFSET nor OFFSET");
            }
        }
        Map<Integer, Long> offsets = new HashMap<>();
        for (int p = 0; p < partitionCount; p++) {
            Long offset = explicit.containsKey(p) ? explicit.get(p) : everywhere;
            if (offset != null) {
                offsets.put(p, offset);
            }
        }
        return offsets;
    }
}
