package dev.rolloutfleet.ops;

import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.WireFormatException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * The results topic split at one moment: results published before it (the originals) and after it
 * (the replays), so a replay under the same run id is still told apart from its original.
 */
final class ResultsSince implements AutoCloseable {

    private final KafkaConsumer<String, byte[]> consumer;
    private final String topic;
    private final Map<TopicPartition, Long> mark;

    ResultsSince(KafkaConnection kafka, String topic) {
        this.consumer = kafka.consumer(null, "fleet-results-since");
        this.topic = topic;
        List<TopicPartition> partitions = TopicSlice.partitions(consumer, topic);
        this.mark = consumer.endOffsets(partitions);
    }

    /** The last result of each run published before the mark (a re-executed run's final word). */
    Map<String, RolloutResult> before(Set<String> runIds) {
        Map<Integer, Long> to = new HashMap<>();
        mark.forEach((tp, end) -> to.put(tp.partition(), end));
        Map<Integer, Long> from = new HashMap<>();
        consumer.beginningOffsets(mark.keySet()).forEach((tp, begin) -> from.put(tp.partition(), begin));
        Map<String, RolloutResult> found = new HashMap<>();
        new TopicSlice(topic, from, to).read(consumer, record -> {
            RolloutResult result = decode(record, runIds);
            if (result != null) {
                found.put(result.runId(), result);
            }
        });
        return found;
    }

    /** The first result of each awaited run published after the mark; waits up to {@code timeout}. */
    Map<String, RolloutResult> awaitAfter(Set<String> runIds, Duration timeout, PrintStream progress) {
        consumer.assign(mark.keySet());
        mark.forEach(consumer::seek);
        Map<String, RolloutResult> found = new HashMap<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        long nextReport = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        while (found.size() < runIds.size() && System.nanoTime() < deadline) {
            for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                RolloutResult result = decode(record, runIds);
                if (result != null) {
                    found.putIfAbsent(result.runId(), result);
                }
            }
            if (System.nanoTime() >= nextReport) {
                progress.printf(Locale.ROOT, "  %s replayed %d/%d%n", ProgressBar.of(found.size(), runIds.size()), found.size(), runIds.size());
                nextReport = System.nanoTime() + Duration.ofSeconds(1).toNanos();
            }
        }
        return found;
    }

    private static RolloutResult decode(ConsumerRecord<String, byte[]> record, Set<String> runIds) {
        if (record.key() == null || !runIds.contains(record.key())) {
            return null;
        }
        try {
            return Json.decode(record.value(), RolloutResult.class);
        } catch (WireFormatException e) {
            return null; // the collector reports unreadable results
        }
    }

    @Override
    public void close() {
        consumer.close();
    }
}
