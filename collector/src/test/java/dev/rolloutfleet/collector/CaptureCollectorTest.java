package dev.rolloutfleet.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.codahale.metrics.MetricRegistry;
import com.fasterxml.jackson.databind.JsonNode;
import dev.rolloutfleet.common.testing.KafkaCluster;
import dev.rolloutfleet.common.testing.RealKafka;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.wire.CaptureEntry;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutResult.CaptureInfo;
import dev.rolloutfleet.common.wire.RolloutResult.Watermark;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.SchemaVersion;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Guarantees 1–5 end to end on a real broker: capture entries and results published as a worker would. */
@ExtendWith(RealKafka.class)
class CaptureCollectorTest {

    @TempDir
    Path dataDir;

    enum Shape { CLEAN, DRIFTED, INCOMPLETE, MISSING }

    /** Publishes one participating rollout's capture entries, then its result, the way a worker does. */
    static void publishRollout(KafkaProducer<String, byte[]> producer, TopicNames topics, String runId, Shape shape)
            throws Exception {
        String attempt = "a" + Integer.toHexString(runId.hashCode());
        List<List<Integer>> prompts = List.of(List.of(1, 2, 3), List.of(1, 2, 3, 4, 5, 6), List.of(1, 2, 3, 4, 5, 6, 7, 8, 9));
        List<List<Integer>> gens = List.of(List.of(4, 5), List.of(7, 8), List.of(10));
        if (shape == Shape.DRIFTED) {
            // The second turn re-tokenized its history: its prompt no longer extends turn one.
            prompts = List.of(List.of(1, 2, 3), List.of(1, 2, 99, 4, 5, 6), List.of(1, 2, 99, 4, 5, 6, 7, 8, 9));
        }
        List<String> callIds = new ArrayList<>();
        RecordMetadata last = null;
        if (shape != Shape.MISSING) {
            for (int i = 0; i < 3; i++) {
                String callId = "call-" + i;
                callIds.add(callId);
                CaptureEntry entry = new CaptureEntry(SchemaVersion.CURRENT, runId, attempt, callId, "main", "m",
                        prompts.get(i), gens.get(i), gens.get(i).stream().map(t -> -0.25).toList(), null, 0L, null);
                last = producer.send(new ProducerRecord<>(topics.tokenCapture(), runId + "/" + attempt + "/" + callId,
                        Json.encode(entry))).get();
            }
        }
        CaptureInfo capture = new CaptureInfo("main", true, callIds, shape == Shape.INCOMPLETE,
                shape == Shape.INCOMPLETE ? List.of("capture_write_failed") : List.of(),
                last == null ? null : new Watermark(last.partition(), last.offset()));
        RolloutResult result = new RolloutResult(SchemaVersion.CURRENT, runId, attempt, null, RolloutStatus.OK, null, false,
                List.of(), null, 6, null, null, null, capture, null);
        producer.send(new ProducerRecord<>(topics.results(), runId, Json.encode(result))).get();
    }

    static Map<String, Shape> publishMix(KafkaCluster kafka, TopicNames topics, int perShape) throws Exception {
        Map<String, Shape> shapes = new java.util.LinkedHashMap<>();
        try (KafkaProducer<String, byte[]> producer = kafka.connection().producer("fake-worker")) {
            for (int i = 0; i < perShape; i++) {
                for (Shape shape : Shape.values()) {
                    String runId = shape.name().toLowerCase() + "-" + i;
                    publishRollout(producer, topics, runId, shape);
                    shapes.put(runId, shape);
                }
            }
        }
        return shapes;
    }

    @Test
    void cleanRolloutsBecomeTokenTrajectoriesUnsafeOnesAreMaskedAndOnlyCleanEvidenceIsRetiredAfterFsync(KafkaCluster kafka)
            throws Exception {
        TopicNames topics = kafka.freshTopics(3);
        Map<String, Shape> shapes = publishMix(kafka, topics, 3);
        Map<String, Long> syncedAt = new ConcurrentHashMap<>();
        CollectorConfig config = CollectorConfig.defaults(kafka.connection(), topics, "c1", dataDir)
                .withGroupId(KafkaCluster.uniqueName("collectors"));
        try (Collector ignored = Collector.start(config, new MetricRegistry(), new CollectorListener() {
            @Override
            public void batchSynced(List<String> runIds) {
                long now = System.currentTimeMillis();
                runIds.forEach(r -> syncedAt.putIfAbsent(r, now));
            }
        })) {
            await().atMost(Duration.ofSeconds(90)).until(() -> CollectorTest.lines(dataDir).size() == shapes.size());
            await().atMost(Duration.ofSeconds(30)).until(() -> retiredMarkers(kafka, topics).size() == 3);
        }
        Map<String, JsonNode> lines = CollectorTest.lines(dataDir).stream()
                .collect(Collectors.toMap(l -> l.get("run_id").asText(), l -> l));
        assertThat(lines).hasSize(shapes.size());
        for (Map.Entry<String, Shape> e : shapes.entrySet()) {
            JsonNode line = lines.get(e.getKey());
            switch (e.getValue()) {
                case CLEAN -> {
                    assertThat(line.get("mask_sample").asBoolean()).isFalse();
                    assertThat(line.get("tokens").toString()).isEqualTo("[1,2,3,4,5,6,7,8,9,10]");
                    assertThat(line.get("loss_mask").toString()).isEqualTo("[0,0,0,1,1,0,1,1,0,1]");
                    assertThat(line.get("turn_spans")).hasSize(3);
                }
                case DRIFTED -> assertThat(line.get("mask_reason").asText()).isEqualTo("multi_root");
                case INCOMPLETE -> assertThat(line.get("mask_reason").asText()).isEqualTo("incomplete");
                case MISSING -> assertThat(line.get("mask_reason").asText()).isEqualTo("missing");
            }
        }
        // Guarantees 2 and 5: only clean evidence is retired, and only after its line was fsynced.
        Map<String, Long> retires = retireRequests(kafka, topics);
        assertThat(retires.keySet()).containsExactlyInAnyOrderElementsOf(
                shapes.entrySet().stream().filter(e -> e.getValue() == Shape.CLEAN).map(Map.Entry::getKey).toList());
        retires.forEach((runId, ts) -> assertThat(ts).as("retire of %s after its fsync", runId)
                .isGreaterThanOrEqualTo(syncedAt.get(runId)));
        assertThat(retiredMarkers(kafka, topics)).hasSize(3);
    }

    @Test
    void aCrashBetweenFsyncAndRetireEndsWithOneRetireAndNoDuplicateLine(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        Map<String, Shape> shapes = publishMix(kafka, topics, 2);
        CollectorConfig config = CollectorConfig.defaults(kafka.connection(), topics, "c1", dataDir)
                .withGroupId(KafkaCluster.uniqueName("collectors"));
        Collector[] first = new Collector[1];
        first[0] = Collector.start(config, new MetricRegistry(), new CollectorListener() {
            @Override
            public void batchSynced(List<String> runIds) {
                first[0].halt();
            }
        });
        first[0].awaitTermination();
        first[0].close();
        assertThat(retireRequests(kafka, topics)).as("the crash came before any retire").isEmpty();

        try (Collector ignored = Collector.start(config, new MetricRegistry(), CollectorListener.NONE)) {
            await().atMost(Duration.ofSeconds(90)).until(() -> CollectorTest.lines(dataDir).size() == shapes.size()
                    && retiredMarkers(kafka, topics).size() == 2);
        }
        List<JsonNode> lines = CollectorTest.lines(dataDir);
        assertThat(lines).extracting(l -> l.get("run_id").asText()).doesNotHaveDuplicates().hasSize(shapes.size());
        Map<String, Integer> retireCounts = new java.util.HashMap<>();
        scan(kafka, topics.tokenCapture()).stream().filter(r -> r.key().endsWith("/!retire"))
                .forEach(r -> retireCounts.merge(r.key(), 1, Integer::sum));
        assertThat(retireCounts).hasSize(2).allSatisfy((k, n) -> assertThat(n).as("retires of %s", k).isEqualTo(1));
    }

    @Test
    void aResultWhoseEvidenceNeverArrivesIsMaskedCaptureLaggingAfterTheWait(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        CollectorConfig config = CollectorConfig.defaults(kafka.connection(), topics, "c1", dataDir)
                .withGroupId(KafkaCluster.uniqueName("collectors")).withCaptureWait(Duration.ofSeconds(1));
        CaptureInfo capture = new CaptureInfo("main", true, List.of("call-0"), false, List.of(), new Watermark(0, 1_000_000));
        RolloutResult result = new RolloutResult(SchemaVersion.CURRENT, "lagging", "a1", null, RolloutStatus.OK, null, false,
                List.of(), null, 2, null, null, null, capture, null);
        try (KafkaProducer<String, byte[]> producer = kafka.connection().producer("fake-worker")) {
            producer.send(new ProducerRecord<>(topics.results(), "lagging", Json.encode(result))).get();
        }
        try (Collector ignored = Collector.start(config, new MetricRegistry(), CollectorListener.NONE)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> CollectorTest.lines(dataDir).size() == 1);
        }
        JsonNode line = CollectorTest.lines(dataDir).get(0);
        assertThat(line.get("mask_sample").asBoolean()).isTrue();
        assertThat(line.get("mask_reason").asText()).isEqualTo("incomplete");
        assertThat(line.at("/capture_build/diagnostics/incomplete_reasons").toString()).contains("capture_lagging");
        assertThat(retireRequests(kafka, topics)).isEmpty();
    }

    @Test
    void pastTheMaskLimitTheCollectorReportsUnhealthyAndStopsConsuming(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        CollectorConfig config = CollectorConfig.defaults(kafka.connection(), topics, "c1", dataDir)
                .withGroupId(KafkaCluster.uniqueName("collectors"))
                .withMaskLimit(new CollectorConfig.MaskLimit(0.25, 4, true));
        try (Collector collector = Collector.start(config, new MetricRegistry(), CollectorListener.NONE);
                KafkaProducer<String, byte[]> producer = kafka.connection().producer("fake-worker")) {
            for (int i = 0; i < 4; i++) {
                publishRollout(producer, topics, "drifted-" + i, Shape.DRIFTED);
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> CollectorTest.lines(dataDir).size() == 4);
            await().atMost(Duration.ofSeconds(10)).until(() -> !collector.isHealthy());
            publishRollout(producer, topics, "clean-after", Shape.CLEAN);
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4))
                    .until(() -> CollectorTest.lines(dataDir).size() == 4);
            assertThat(collector.isRunning()).isTrue();
        }
    }

    @Test
    void belowTheMaskLimitTheCollectorStaysHealthy(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        CollectorConfig config = CollectorConfig.defaults(kafka.connection(), topics, "c1", dataDir)
                .withGroupId(KafkaCluster.uniqueName("collectors"))
                .withMaskLimit(new CollectorConfig.MaskLimit(0.5, 4, true));
        try (Collector collector = Collector.start(config, new MetricRegistry(), CollectorListener.NONE);
                KafkaProducer<String, byte[]> producer = kafka.connection().producer("fake-worker")) {
            publishRollout(producer, topics, "d-1", Shape.DRIFTED);
            for (int i = 0; i < 4; i++) {
                publishRollout(producer, topics, "c-" + i, Shape.CLEAN);
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> CollectorTest.lines(dataDir).size() == 5);
            assertThat(collector.isHealthy()).isTrue();
        }
    }

    static Map<String, Long> retireRequests(KafkaCluster kafka, TopicNames topics) {
        return scan(kafka, topics.tokenCapture()).stream().filter(r -> r.key().endsWith("/!retire") && r.value() != null)
                .collect(Collectors.toMap(r -> r.key().substring(0, r.key().indexOf('/')), ConsumerRecord::timestamp,
                        Math::min));
    }

    static List<String> retiredMarkers(KafkaCluster kafka, TopicNames topics) {
        return scan(kafka, topics.tokenCapture()).stream().filter(r -> r.key().endsWith("/!retired") && r.value() != null)
                .map(r -> r.key().substring(0, r.key().indexOf('/'))).distinct().toList();
    }

    static List<ConsumerRecord<String, byte[]>> scan(KafkaCluster kafka, String topic) {
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = kafka.connection().consumer(null, "scan")) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }
}
