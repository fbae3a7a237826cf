package dev.rolloutfleet.ops;

import static dev.rolloutfleet.ops.OperatorCommandsTest.concat;
import static dev.rolloutfleet.ops.OperatorCommandsTest.fleet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.codahale.metrics.MetricRegistry;
import com.fasterxml.jackson.databind.JsonNode;
import dev.rolloutfleet.common.testing.KafkaCluster;
import dev.rolloutfleet.common.testing.RealKafka;
import dev.rolloutfleet.common.topics.DeadLetterHeaders;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.worker.Worker;
import dev.rolloutfleet.worker.rollout.RolloutSeeds;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealKafka.class)
class ReplayCommandTest {

    @Test
    void replayingDeterministicRolloutsUnderNewRunIdsReportsNoDifferences(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(2);
        List<RolloutRequest> originals = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            originals.add(DemoCommand.demoRequest("orig-" + i, i));
        }
        originals.add(withoutSeed(DemoCommand.demoRequest("orig-unseeded", 0)));
        try (Worker ignored = Worker.start(EndToEndTest.workerConfig(kafka, topics), new MetricRegistry())) {
            publish(kafka, topics.requests(), originals);
            await().atMost(Duration.ofSeconds(60)).until(() -> results(kafka, topics).keySet().containsAll(
                    originals.stream().map(RolloutRequest::runId).toList()));

            OperatorCommandsTest.Ran replay = fleet("replay", "--diff", "--bootstrap-servers", kafka.bootstrapServers(),
                    "--topic-prefix", topics.prefix());

            assertThat(replay.exit()).as(replay.out()).isZero();
            JsonNode summary = replay.summary();
            assertThat(summary.get("compared").asInt()).isEqualTo(7);
            assertThat(summary.get("differences").asInt()).isZero();
            assertThat(summary.get("missing").asInt()).isZero();
        }
        List<RolloutRequest> replays = TopicRecords.scan(kafka, topics.requests()).stream()
                .map(r -> Json.decode(r.value(), RolloutRequest.class)).filter(r -> r.metadata() != null).toList();
        assertThat(replays).hasSize(7).allSatisfy(r -> {
            assertThat(r.runId()).isEqualTo(RequestReplays.replayId(r.metadata().get("replay_of").asText(),
                    r.metadata().get("replay_batch").asText()));
            assertThat(r.metadata().get("replay_source").asText()).startsWith(topics.requests() + ":");
        });
        assertThat(results(kafka, topics).values().stream().filter(r -> r.runId().contains(".replay-")))
                .as("a replay's result names its original").hasSize(7)
                .allSatisfy(r -> assertThat(r.runId()).startsWith(r.extra().get("metadata").get("replay_of").asText()));
        RolloutRequest unseeded = replays.stream().filter(r -> r.metadata().get("replay_of").asText().equals("orig-unseeded"))
                .findFirst().orElseThrow();
        assertThat(unseeded.env().seed()).as("the seed the original drew from its run id is pinned")
                .isEqualTo(RolloutSeeds.fromRunId("orig-unseeded"));
    }

    @Test
    void llmRolloutsAgainstTheSimulatedServerReplayIdentically(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(2);
        try (dev.rolloutfleet.worker.sim.SimLlmServer sim = dev.rolloutfleet.worker.sim.SimLlmServer.start("127.0.0.1", 0, "sim-1",
                new dev.rolloutfleet.worker.sim.SimLlmServer.Latency(1, 0, 64), dev.rolloutfleet.worker.sim.SimLlmServer.Faults.NONE);
                Worker ignored = Worker.start(EndToEndTest.workerConfig(kafka, topics), new MetricRegistry())) {
            List<RolloutRequest> originals = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                originals.add(DemoCommand.llmRequest("llm-" + i, i, sim.baseUrl()));
            }
            publish(kafka, topics.requests(), originals);
            await().atMost(Duration.ofSeconds(60)).until(() -> results(kafka, topics).size() == 5);

            OperatorCommandsTest.Ran replay = fleet("replay", "--diff", "--bootstrap-servers", kafka.bootstrapServers(),
                    "--topic-prefix", topics.prefix());

            assertThat(replay.exit()).as(replay.out()).isZero();
            assertThat(replay.summary().get("identical").asInt()).isEqualTo(5);
            assertThat(results(kafka, topics).get("llm-0").trajectories().get(0).steps()).as("a real multi-step rollout was compared")
                    .hasSizeGreaterThan(1);
        }
    }

    @Test
    void runIdsSelectWhichRequestsReplayAndSameIdsKeepsThem(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(2);
        List<RolloutRequest> originals = List.of(DemoCommand.demoRequest("keep-1", 1), DemoCommand.demoRequest("keep-2", 2),
                DemoCommand.demoRequest("keep-3", 3));
        try (Worker ignored = Worker.start(EndToEndTest.workerConfig(kafka, topics), new MetricRegistry())) {
            publish(kafka, topics.requests(), originals);
            await().atMost(Duration.ofSeconds(60)).until(() -> results(kafka, topics).size() == 3);

            OperatorCommandsTest.Ran replay = fleet("replay", "--run-ids", "keep-2,keep-3", "--same-ids", "--diff",
                    "--bootstrap-servers", kafka.bootstrapServers(), "--topic-prefix", topics.prefix());

            assertThat(replay.exit()).as(replay.out()).isZero();
            assertThat(replay.summary().get("compared").asInt()).isEqualTo(2);
        }
        Map<String, Long> resultsPerRun = TopicRecords.scan(kafka, topics.results()).stream()
                .collect(Collectors.groupingBy(r -> r.key(), Collectors.counting()));
        assertThat(resultsPerRun).containsExactlyInAnyOrderEntriesOf(Map.of("keep-1", 1L, "keep-2", 2L, "keep-3", 2L));
    }

    @Test
    void offsetsAndTimesBoundTheSelection(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        long base = Instant.now().minus(Duration.ofMinutes(30)).toEpochMilli();
        try (KafkaProducer<String, byte[]> producer = kafka.connection().producer("test")) {
            for (int i = 0; i < 6; i++) {
                RolloutRequest request = DemoCommand.demoRequest("sel-" + i, i);
                producer.send(new ProducerRecord<>(topics.requests(), 0, base + i * 1000L, request.kafkaKey(), Json.encode(request))).get();
            }
        }
        String[] common = {"--dry-run", "--bootstrap-servers", kafka.bootstrapServers(), "--topic-prefix", topics.prefix()};

        OperatorCommandsTest.Ran byOffset = fleet(concat(new String[] {"replay", "--from-offset", "0:2", "--to-offset", "5"}, common));
        OperatorCommandsTest.Ran byTime = fleet(concat(new String[] {"replay", "--from-time", Instant.ofEpochMilli(base + 4000).toString()},
                common));
        OperatorCommandsTest.Ran badOffset = fleet(concat(new String[] {"replay", "--from-offset", "7:2"}, common));

        assertThat(byOffset.out()).contains("sel-2 -> ").contains("sel-4 -> ").doesNotContain("sel-1 ").doesNotContain("sel-5 ");
        assertThat(byOffset.summary().get("selected").asInt()).isEqualTo(3);
        assertThat(byTime.summary().get("selected").asInt()).isEqualTo(2);
        assertThat(byTime.out()).contains("sel-4 -> ").contains("sel-5 -> ");
        assertThat(badOffset.exit()).as("a partition the topic does not have is refused").isNotZero();
        assertThat(byOffset.summary().get("published").asInt()).isZero();
    }

    @Test
    void dlqRecordsAreReDrivenToTheirSourceTopicAndRunOnceTheyParse(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(2);
        RolloutRequest fixed = DemoCommand.demoRequest("was-dead", 3);
        try (KafkaProducer<String, byte[]> producer = kafka.connection().producer("test")) {
            // What a worker that could not read this request (say, an older version) wrote to the DLQ.
            producer.send(deadLetter(topics, fixed.kafkaKey(), Json.encode(fixed), "unsupported_schema")).get();
            producer.send(deadLetter(topics, "junk", "not json".getBytes(StandardCharsets.UTF_8), "unparseable")).get();
        }
        try (Worker ignored = Worker.start(EndToEndTest.workerConfig(kafka, topics), new MetricRegistry())) {
            OperatorCommandsTest.Ran redrive = fleet("replay", "--dlq", "--error-code", "unsupported_schema",
                    "--bootstrap-servers", kafka.bootstrapServers(), "--topic-prefix", topics.prefix());

            assertThat(redrive.exit()).as(redrive.out()).isZero();
            assertThat(redrive.summary().get("redriven").asInt()).isEqualTo(1);
            await().atMost(Duration.ofSeconds(60)).until(() -> results(kafka, topics).containsKey("was-dead"));
            assertThat(results(kafka, topics).get("was-dead").status()).isEqualTo(RolloutStatus.OK);
        }
        assertThat(TopicRecords.scan(kafka, topics.requests())).singleElement().satisfies(r -> assertThat(new String(
                r.headers().lastHeader(DeadLetterHeaders.REDRIVEN_FROM).value(), StandardCharsets.UTF_8)).isEqualTo("0:0"));
    }

    private static ProducerRecord<String, byte[]> deadLetter(TopicNames topics, String key, byte[] value, String code) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topics.requestsDlq(), 0, key, value);
        record.headers().add(DeadLetterHeaders.ERROR_CODE, code.getBytes(StandardCharsets.UTF_8));
        record.headers().add(DeadLetterHeaders.SOURCE_TOPIC, topics.requests().getBytes(StandardCharsets.UTF_8));
        return record;
    }

    private static RolloutRequest withoutSeed(RolloutRequest r) {
        return new RolloutRequest(r.schemaVersion(), r.runId(), r.groupId(),
                new RolloutRequest.EnvSpec(r.env().envName(), null, r.env().config()), r.policy(), r.ops(), r.record(), r.onDone(),
                r.safety(), r.mode(), r.trainingSessionId(), r.policyVersion(), r.metadata(), null);
    }

    private static void publish(KafkaCluster kafka, String topic, List<RolloutRequest> requests) throws Exception {
        RecordPublisher.publishAll(kafka.connection(), "test", RecordPublisher.requests(topic, requests));
    }

    private static Map<String, RolloutResult> results(KafkaCluster kafka, TopicNames topics) {
        return TopicRecords.scan(kafka, topics.results()).stream().map(r -> Json.decode(r.value(), RolloutResult.class))
                .collect(Collectors.toMap(RolloutResult::runId, r -> r, (a, b) -> a));
    }
}
