package dev.rolloutfleet.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.codahale.metrics.MetricRegistry;
import com.fasterxml.jackson.databind.JsonNode;
import dev.rolloutfleet.common.testing.KafkaCluster;
import dev.rolloutfleet.common.testing.RealKafka;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.SchemaVersion;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(RealKafka.class)
class CollectorTest {

    @TempDir
    Path dataDir;

    static RolloutResult result(String runId) {
        return new RolloutResult(SchemaVersion.CURRENT, runId, "a1", null, RolloutStatus.OK, null, false, List.of(), null,
                2, null, null, null, null, null);
    }

    @Test
    void offsetsAreCommittedOnlyAfterFsyncAndACrashBetweenThemLosesAndDuplicatesNothing(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(3);
        String group = KafkaCluster.uniqueName("collectors");
        CollectorConfig config = CollectorConfig.defaults(kafka.connection(), topics, "c1", dataDir).withGroupId(group);
        List<String> runIds = publishResults(kafka, topics, "run", 50);

        // First collector: crash right after its first fsync, before committing.
        AtomicBoolean committedBeforeSync = new AtomicBoolean();
        Collector[] first = new Collector[1];
        List<Integer> syncedBatches = new ArrayList<>();
        first[0] = Collector.start(config, new MetricRegistry(), new CollectorListener() {
            @Override
            public void batchSynced(List<String> runIdsOfBatch) {
                if (committedOffsets(kafka, group, topics).values().stream().anyMatch(o -> o > 0)) {
                    committedBeforeSync.set(true);
                }
                syncedBatches.add(runIdsOfBatch.size());
                first[0].halt();
            }
        });
        first[0].awaitTermination();
        first[0].close();
        assertThat(committedBeforeSync).as("nothing was committed before the fsync").isFalse();
        assertThat(syncedBatches).hasSize(1);
        assertThat(syncedBatches.get(0)).isPositive();
        assertThat(committedOffsets(kafka, group, topics).values()).as("the crash left nothing committed").allMatch(o -> o == 0);
        assertThat(lines(dataDir)).hasSize(syncedBatches.get(0));

        // Second collector on the same data directory: re-reads the batch, writes the rest, no duplicates.
        try (Collector second = Collector.start(config, new MetricRegistry(), CollectorListener.NONE)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> lines(dataDir).size() >= 50
                    && committedOffsets(kafka, group, topics).values().stream().mapToLong(Long::longValue).sum() == 50);
        }
        List<JsonNode> lines = lines(dataDir);
        assertThat(lines).hasSize(50);
        assertThat(lines).extracting(l -> l.get("run_id").asText()).containsExactlyInAnyOrderElementsOf(runIds);
        assertThat(lines).allSatisfy(l -> assertThat(Json.decode(l.toString(), RolloutResult.class).status()).isEqualTo(RolloutStatus.OK));
    }

    @Test
    void resultsArrivingWithinTheGroupCommitDelayShareOneFsync(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        CollectorConfig config = CollectorConfig.defaults(kafka.connection(), topics, "c1", dataDir)
                .withGroupId(KafkaCluster.uniqueName("collectors"))
                .withGroupCommit(new CollectorConfig.GroupCommit(1L << 30, Duration.ofSeconds(2)));
        List<Integer> batches = new java.util.concurrent.CopyOnWriteArrayList<>();
        MetricRegistry registry = new MetricRegistry();
        try (Collector collector = Collector.start(config, registry, new CollectorListener() {
            @Override
            public void batchSynced(List<String> runIds) {
                batches.add(runIds.size());
            }
        })) {
            await().atMost(Duration.ofSeconds(30)).until(collector::isReady);
            try (KafkaProducer<String, byte[]> producer = kafka.connection().producer("trickle")) {
                for (int i = 0; i < 20; i++) {
                    producer.send(new ProducerRecord<>(topics.results(), "t-" + i, Json.encode(result("t-" + i)))).get();
                    Thread.sleep(20);
                }
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> lines(dataDir).size() == 20);
        }
        assertThat(batches).as("20 results over ~0.5 s, gathered for up to 2 s").hasSizeLessThanOrEqualTo(2);
        assertThat(registry.timer("collector.fsync").getCount()).isLessThanOrEqualTo(2);
    }

    @Test
    void aSecondResultForADurableRunIsNotWrittenAgain(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        CollectorConfig config = CollectorConfig.defaults(kafka.connection(), topics, "c1", dataDir)
                .withGroupId(KafkaCluster.uniqueName("collectors"));
        publishResults(kafka, topics, "dup", 3);
        publishResults(kafka, topics, "dup", 3);
        MetricRegistry registry = new MetricRegistry();
        try (Collector ignored = Collector.start(config, registry, CollectorListener.NONE)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> registry.meter("collector.results.duplicate").getCount() == 3);
        }
        assertThat(lines(dataDir)).hasSize(3);
    }

    @Test
    void unreadableResultsAreKeptAsideAndDoNotStopThePartition(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        CollectorConfig config = CollectorConfig.defaults(kafka.connection(), topics, "c1", dataDir)
                .withGroupId(KafkaCluster.uniqueName("collectors"));
        try (KafkaProducer<String, byte[]> producer = kafka.connection().producer("test")) {
            producer.send(new ProducerRecord<>(topics.results(), "x", "garbage".getBytes(StandardCharsets.UTF_8))).get();
        }
        publishResults(kafka, topics, "after", 2);
        try (Collector ignored = Collector.start(config, new MetricRegistry(), CollectorListener.NONE)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> lines(dataDir).size() == 2);
        }
        List<String> rejected = Files.readAllLines(dataDir.resolve("rejected-results.jsonl"));
        assertThat(rejected).singleElement().satisfies(l -> assertThat(l).contains("\"error_code\":\"not_json\""));
    }

    @Test
    void twoCollectorsCannotShareADataDirectory(KafkaCluster kafka) {
        TopicNames topics = kafka.freshTopics(1);
        CollectorConfig config = CollectorConfig.defaults(kafka.connection(), topics, "c1", dataDir)
                .withGroupId(KafkaCluster.uniqueName("collectors"));
        try (Collector ignored = Collector.start(config, new MetricRegistry(), CollectorListener.NONE)) {
            assertThatThrownBy(() -> Collector.start(config, new MetricRegistry(), CollectorListener.NONE))
                    .hasMessageContaining("another collector is using");
        }
    }

    static List<String> publishResults(KafkaCluster kafka, TopicNames topics, String prefix, int count) throws Exception {
        List<String> runIds = new ArrayList<>();
        try (KafkaProducer<String, byte[]> producer = kafka.connection().producer("test-results")) {
            for (int i = 0; i < count; i++) {
                String runId = prefix + "-" + i;
                runIds.add(runId);
                producer.send(new ProducerRecord<>(topics.results(), runId, Json.encode(result(runId))));
            }
            producer.flush();
        }
        return runIds;
    }

    static List<JsonNode> lines(Path dir) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.filter(p -> p.getFileName().toString().startsWith("results-")).toList()) {
                for (String line : Files.readAllLines(file)) {
                    out.add(Json.mapper().readTree(line));
                }
            }
        }
        return out;
    }

    static Map<TopicPartition, Long> committedOffsets(KafkaCluster kafka, String group, TopicNames topics) {
        try (Admin admin = kafka.admin()) {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, Long> out = new java.util.HashMap<>();
            for (int p = 0; p < 3; p++) {
                TopicPartition tp = new TopicPartition(topics.results(), p);
                OffsetAndMetadata o = offsets.get(tp);
                out.put(tp, o == null ? 0L : o.offset());
            }
            return out;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
