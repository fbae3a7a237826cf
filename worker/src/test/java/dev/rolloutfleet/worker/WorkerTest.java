package dev.rolloutfleet.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.MetricRegistry;
import dev.rolloutfleet.common.testing.KafkaCluster;
import dev.rolloutfleet.common.testing.RealKafka;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.TraceEvent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealKafka.class)
class WorkerTest {

    static String corridorRequest(String runId, int maxSteps) {
        return """
                {"run_id":"%s","env":{"env_name":"corridor","seed":3,"config":{"env_params":{"max_steps_per_episode":%d}}},
                 "policy":{"policy_name":"scripted"},"on_done":"terminate"}
                """.formatted(runId, maxSteps);
    }

    @Test
    void aRequestBecomesTraceEventsAndOneResultCarryingTheAttempt(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(2);
        MetricRegistry metrics = new MetricRegistry();
        try (Worker ignored = Worker.start(config(kafka, topics), metrics)) {
            send(kafka, topics.requests(), "r1", corridorRequest("r1", 10).getBytes(StandardCharsets.UTF_8));
            RolloutResult result = Json.decode(TopicReader.readUntil(kafka.connection(), topics.results(),
                    r -> r.size() == 1, Duration.ofSeconds(60)).get(0).value(), RolloutResult.class);

            assertThat(result.status()).isEqualTo(RolloutStatus.OK);
            assertThat(result.attempt()).matches("[0-9a-f]{12}");
            assertThat(result.worker().id()).isEqualTo("w-test");
            // seed 3 puts the goal at 3 + 3 % 5 = 6: six steps right, one episode of return 1
            assertThat(result.metrics().numSteps()).isEqualTo(6);
            assertThat(result.metrics().episodeReturns()).containsExactly(1.0);
            assertThat(result.trajectories().get(0).steps()).hasSize(6).last()
                    .satisfies(s -> assertThat(s.done()).isTrue());

            List<TraceEvent> events = TopicReader.readUntil(kafka.connection(), topics.traces(),
                    r -> r.stream().anyMatch(e -> new String(e.value(), StandardCharsets.UTF_8).contains("rollout_finished")),
                    Duration.ofSeconds(30)).stream().map(r -> Json.decode(r.value(), TraceEvent.class)).toList();
            assertThat(events).extracting(TraceEvent::attempt).containsOnly(result.attempt());
            assertThat(events).extracting(TraceEvent::seq).isSorted().doesNotHaveDuplicates();
            assertThat(events.get(0).type()).isEqualTo(TraceEvent.ROLLOUT_STARTED);
            assertThat(events.get(events.size() - 1).type()).isEqualTo(TraceEvent.ROLLOUT_FINISHED);
            assertThat(events).filteredOn(e -> e.type().equals(TraceEvent.ENV_STEP)).hasSize(6);
        }
        assertThat(metrics.getGauges()).containsKeys("worker.inflight", "worker.queued", "worker.partitions.paused",
                "worker.committed_lag", "worker.uncommitted");
        assertThat(metrics.getMeters()).containsKeys("worker.rollouts.started", "worker.rollouts.ok", "worker.rollouts.failed",
                "worker.rollouts.invalid", "worker.rollouts.aborted", "worker.rollouts.cancelled", "worker.requests.dlq",
                "worker.outputs.send_failed", "worker.ledger.skipped_finished");
        assertThat(metrics.getTimers()).containsKeys("worker.rollout.duration", "worker.rollout.queue_delay");
        assertThat(metrics.meter("worker.rollouts.ok").getCount()).isEqualTo(1);
    }

    @Test
    void recordReturnTracePutsTheAttemptsTraceEventsInTheResult(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        try (Worker ignored = Worker.start(config(kafka, topics), new MetricRegistry())) {
            String request = corridorRequest("traced", 4).replace("\"on_done\":\"terminate\"",
                    "\"on_done\":\"terminate\",\"record\":{\"return_trace\":true,\"trace_format\":\"structured\"}");
            send(kafka, topics.requests(), "traced", request.getBytes(StandardCharsets.UTF_8));
            RolloutResult result = Json.decode(TopicReader.readUntil(kafka.connection(), topics.results(),
                    r -> r.size() == 1, Duration.ofSeconds(60)).get(0).value(), RolloutResult.class);
            com.fasterxml.jackson.databind.JsonNode trace = result.extra().get("trace");
            assertThat(trace.get("format").asText()).isEqualTo("structured");
            assertThat(trace.get("events").get(0).get("type").asText()).isEqualTo(TraceEvent.ROLLOUT_STARTED);
            assertThat(trace.get("events").get(trace.get("events").size() - 1).get("type").asText())
                    .isEqualTo(TraceEvent.ROLLOUT_FINISHED);
        }
    }

    @Test
    void theClassicGroupProtocolWithStaticMembershipRunsRequestsToo(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(2);
        WorkerConfig config = WorkerConfig.builder(kafka.connection(), topics, "w-classic")
                .groupId(KafkaCluster.uniqueName("classic")).groupProtocol("classic").groupInstanceId("static-1").build();
        try (Worker ignored = Worker.start(config, new MetricRegistry())) {
            send(kafka, topics.requests(), "c1", corridorRequest("c1", 4).getBytes(StandardCharsets.UTF_8));
            send(kafka, topics.requests(), "c2", corridorRequest("c2", 4).getBytes(StandardCharsets.UTF_8));
            List<ConsumerRecord<String, byte[]>> results = TopicReader.readUntil(kafka.connection(), topics.results(),
                    r -> r.size() == 2, Duration.ofSeconds(60));
            assertThat(results).extracting(ConsumerRecord::key).containsExactlyInAnyOrder("c1", "c2");
        }
    }

    @Test
    void unreadableBytesGoToTheDlqAndInvalidRequestsGetAnInvalidResultWhileGoodOnesFinish(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        WorkerConfig config = WorkerConfig.builder(kafka.connection(), topics, "w-test")
                .groupId(KafkaCluster.uniqueName("g")).maxRequestBytes(4096).build();
        try (Worker ignored = Worker.start(config, new MetricRegistry())) {
            send(kafka, topics.requests(), "k", corridorRequest("good-1", 5).getBytes(StandardCharsets.UTF_8));
            send(kafka, topics.requests(), "k", "{not json".getBytes(StandardCharsets.UTF_8));
            send(kafka, topics.requests(), "k", new byte[0]);
            send(kafka, topics.requests(), "k", null);
            send(kafka, topics.requests(), "k", ("{\"run_id\":\"big\",\"pad\":\"" + "x".repeat(5000) + "\"}").getBytes(StandardCharsets.UTF_8));
            send(kafka, topics.requests(), "k", "{\"run_id\":7}".getBytes(StandardCharsets.UTF_8));
            send(kafka, topics.requests(), "k", "{\"env\":{\"env_name\":\"corridor\"},\"policy\":{\"policy_name\":\"scripted\"}}".getBytes(StandardCharsets.UTF_8));
            send(kafka, topics.requests(), "k", corridorRequest("bad-steps", -3).getBytes(StandardCharsets.UTF_8));
            send(kafka, topics.requests(), "k", corridorRequest("good-2", 5).getBytes(StandardCharsets.UTF_8));

            Map<String, RolloutResult> results = TopicReader.readUntil(kafka.connection(), topics.results(),
                    r -> r.size() == 3, Duration.ofSeconds(60)).stream()
                    .map(r -> Json.decode(r.value(), RolloutResult.class))
                    .collect(Collectors.toMap(RolloutResult::runId, r -> r));
            assertThat(results.get("good-1").status()).isEqualTo(RolloutStatus.OK);
            assertThat(results.get("good-2").status()).isEqualTo(RolloutStatus.OK);
            assertThat(results.get("bad-steps").status()).isEqualTo(RolloutStatus.INVALID);
            assertThat(results.get("bad-steps").error().code()).isEqualTo("invalid_env_params");
            assertThat(results.get("bad-steps").error().message())
                    .isEqualTo("env.config.env_params.max_steps_per_episode must be a positive integer, got -3");

            List<ConsumerRecord<String, byte[]>> dlq = TopicReader.readUntil(kafka.connection(), topics.requestsDlq(),
                    r -> r.size() == 6, Duration.ofSeconds(30));
            // Rollouts run concurrently, so the DLQ's order is not the request order; the source offset says which is which.
            Map<Long, String> codeBySourceOffset = dlq.stream().collect(Collectors.toMap(
                    r -> Long.parseLong(header(r, "fleet.source.offset")), r -> header(r, "fleet.error.code")));
            assertThat(codeBySourceOffset).containsExactlyInAnyOrderEntriesOf(Map.of(
                    1L, "not_json", 2L, "empty_value", 3L, "empty_value", 4L, "oversized_value", 5L, "wrong_type",
                    6L, "invalid_request"));
            assertThat(dlq).allSatisfy(r -> {
                assertThat(header(r, "fleet.source.topic")).isEqualTo(topics.requests());
                assertThat(header(r, "fleet.source.partition")).isEqualTo("0");
                assertThat(header(r, "fleet.worker")).isEqualTo("w-test");
                assertThat(header(r, "fleet.error.message")).isNotBlank();
            });
            assertThat(dlq).filteredOn(r -> header(r, "fleet.source.offset").equals("1")).singleElement()
                    .satisfies(r -> assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("{not json"));
        }
    }

    private static WorkerConfig config(KafkaCluster kafka, TopicNames topics) {
        return WorkerConfig.builder(kafka.connection(), topics, "w-test").groupId(KafkaCluster.uniqueName("workers")).build();
    }

    private static void send(KafkaCluster kafka, String topic, String key, byte[] value) throws Exception {
        try (KafkaProducer<String, byte[]> producer = kafka.connection().producer("test-submit")) {
            producer.send(new ProducerRecord<>(topic, key, value)).get();
        }
    }

    private static String header(ConsumerRecord<String, byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

}
