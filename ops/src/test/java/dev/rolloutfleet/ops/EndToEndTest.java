package dev.rolloutfleet.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.codahale.metrics.MetricRegistry;
import com.fasterxml.jackson.databind.JsonNode;
import dev.rolloutfleet.collector.Collector;
import dev.rolloutfleet.collector.CollectorConfig;
import dev.rolloutfleet.collector.CollectorListener;
import dev.rolloutfleet.common.testing.KafkaCluster;
import dev.rolloutfleet.common.testing.RealKafka;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.worker.Worker;
import dev.rolloutfleet.worker.WorkerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(RealKafka.class)
class EndToEndTest {

    @TempDir
    Path dataDir;

    @Test
    void fiftyRequestsBecomeFiftyDurableLinesWithDistinctRunIds(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(4);
        List<String> runIds = submit(kafka, topics, 50);
        try (Worker ignored = Worker.start(workerConfig(kafka, topics), new MetricRegistry());
                Collector alsoIgnored = Collector.start(collectorConfig(kafka, topics, dataDir), new MetricRegistry(),
                        CollectorListener.NONE)) {
            await().atMost(Duration.ofSeconds(90)).until(() -> durableLines(dataDir).size() >= 50);
        }
        List<JsonNode> lines = durableLines(dataDir);
        assertThat(lines).hasSize(50);
        assertThat(lines).extracting(l -> l.get("run_id").asText()).containsExactlyInAnyOrderElementsOf(runIds);
        assertThat(lines).allSatisfy(l -> {
            RolloutResult result = Json.decode(l.toString(), RolloutResult.class);
            assertThat(result.status()).isEqualTo(RolloutStatus.OK);
            assertThat(result.trajectories()).isNotEmpty();
        });
    }

    @Test
    void scriptedRolloutsWithTokenCaptureBecomeTrainableTokenSequencesWithoutAModel(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(2);
        try (KafkaProducer<String, byte[]> producer = kafka.connection().producer("test-submit")) {
            for (int i = 0; i < 5; i++) {
                RolloutRequest request = DemoCommand.demoRequest("scripted-capture-" + i, i);
                request.policy().config().putObject("token_id_capture").put("enabled", true).put("all_agents", true);
                producer.send(new ProducerRecord<>(topics.requests(), request.kafkaKey(), Json.encode(request))).get();
            }
        }
        try (Worker ignored = Worker.start(workerConfig(kafka, topics), new MetricRegistry());
                Collector alsoIgnored = Collector.start(collectorConfig(kafka, topics, dataDir), new MetricRegistry(),
                        CollectorListener.NONE)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> durableLines(dataDir).size() >= 5);
        }
        assertThat(durableLines(dataDir)).hasSize(5).allSatisfy(line -> {
            assertThat(line.path("mask_sample").asBoolean()).as(line.path("mask_reason").asText()).isFalse();
            int steps = line.at("/trajectories/0/steps").size();
            assertThat(line.at("/capture/call_ids").size()).isEqualTo(steps);
            assertThat(line.get("tokens").size()).isEqualTo(line.get("loss_mask").size()).isEqualTo(line.get("logprobs").size());
            // The last generation, decoded from the trainable (loss_mask = 1) tail, is the last step's tool call.
            StringBuilder tail = new StringBuilder();
            for (int i = line.get("tokens").size() - 1; i >= 0 && line.get("loss_mask").get(i).asInt() == 1; i--) {
                tail.insert(0, (char) line.get("tokens").get(i).asInt());
            }
            assertThat(tail.toString()).contains("\"direction\"");
        });
    }

    @Test
    void aCollectorStoppedRightAfterItsFsyncAndRestartedLosesNoLineAndDuplicatesNone(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(4);
        List<String> runIds = submit(kafka, topics, 50);
        CollectorConfig config = collectorConfig(kafka, topics, dataDir);
        try (Worker ignored = Worker.start(workerConfig(kafka, topics), new MetricRegistry())) {
            AtomicInteger syncs = new AtomicInteger();
            Collector[] crashing = new Collector[1];
            crashing[0] = Collector.start(config, new MetricRegistry(), new CollectorListener() {
                @Override
                public void batchSynced(List<String> runIdsOfBatch) {
                    if (!runIdsOfBatch.isEmpty() && syncs.incrementAndGet() == 1) {
                        crashing[0].halt();
                    }
                }
            });
            crashing[0].awaitTermination();
            crashing[0].close();
            int beforeRestart = durableLines(dataDir).size();
            assertThat(beforeRestart).as("the first batch reached disk before the crash").isPositive();

            try (Collector restarted = Collector.start(config, new MetricRegistry(), CollectorListener.NONE)) {
                await().atMost(Duration.ofSeconds(90)).until(() -> durableLines(dataDir).size() >= 50);
            }
        }
        List<JsonNode> lines = durableLines(dataDir);
        assertThat(lines).hasSize(50);
        assertThat(lines).extracting(l -> l.get("run_id").asText()).containsExactlyInAnyOrderElementsOf(runIds);
    }

    static List<String> submit(KafkaCluster kafka, TopicNames topics, int count) throws Exception {
        List<String> runIds = new ArrayList<>();
        try (KafkaProducer<String, byte[]> producer = kafka.connection().producer("test-submit")) {
            for (int i = 0; i < count; i++) {
                RolloutRequest request = DemoCommand.demoRequest(KafkaCluster.uniqueName("e2e"), i);
                runIds.add(request.runId());
                producer.send(new ProducerRecord<>(topics.requests(), request.kafkaKey(), Json.encode(request)));
            }
            producer.flush();
        }
        return runIds;
    }

    static WorkerConfig workerConfig(KafkaCluster kafka, TopicNames topics) {
        return WorkerConfig.builder(kafka.connection(), topics, "w1").groupId(KafkaCluster.uniqueName("workers")).build();
    }

    static CollectorConfig collectorConfig(KafkaCluster kafka, TopicNames topics, Path dir) {
        return CollectorConfig.defaults(kafka.connection(), topics, "c1", dir).withGroupId(KafkaCluster.uniqueName("collectors"));
    }

    static List<JsonNode> durableLines(Path dir) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.filter(p -> p.getFileName().toString().matches("results-p\\d+-\\d+\\.jsonl")).toList()) {
                for (String line : Files.readAllLines(file)) {
                    out.add(Json.mapper().readTree(line));
                }
            }
        }
        return out;
    }
}
