package dev.rolloutfleet.ops;

import static dev.rolloutfleet.ops.OperatorCommandsTest.concat;
import static dev.rolloutfleet.ops.OperatorCommandsTest.fleet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.codahale.metrics.MetricRegistry;
import com.fasterxml.jackson.databind.JsonNode;
import dev.rolloutfleet.collector.Collector;
import dev.rolloutfleet.collector.CollectorListener;
import dev.rolloutfleet.common.metrics.MetricsHttpServer;
import dev.rolloutfleet.common.testing.KafkaCluster;
import dev.rolloutfleet.common.testing.RealKafka;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.TraceEvent;
import dev.rolloutfleet.worker.Worker;
import dev.rolloutfleet.worker.sim.SimLlmServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(RealKafka.class)
class StatusCommandTest {

    @Test
    void statusFollowsARunFromQueuedThroughRunningToDurableWithItsCaptureRetired(KafkaCluster kafka, @TempDir Path dir)
            throws Exception {
        TopicNames topics = kafka.freshTopics(2);
        String[] where = {"--bootstrap-servers", kafka.bootstrapServers(), "--topic-prefix", topics.prefix()};
        try (SimLlmServer sim = SimLlmServer.start("127.0.0.1", 0, "sim-1", new SimLlmServer.Latency(1, 0, 64), SimLlmServer.Faults.NONE)) {
            publish(kafka, topics, DemoCommand.llmRequest("captured-1", 1, sim.baseUrl()), slowRequest("slow-1"));

            assertThat(status("captured-1", where).path("state").asText()).as("no worker yet").isEqualTo("queued");
            assertThat(fleet(concat(new String[] {"status", "never-published"}, where)).exit()).isEqualTo(1);

            try (Worker ignored = Worker.start(EndToEndTest.workerConfig(kafka, topics), new MetricRegistry());
                    Collector collector = Collector.start(EndToEndTest.collectorConfig(kafka, topics, dir), new MetricRegistry(),
                            CollectorListener.NONE);
                    MetricsHttpServer admin = MetricsHttpServer.start("127.0.0.1", 0, new MetricRegistry(), collector::isReady)) {
                CollectorCommand.serveAdmin(admin, collector);
                String collectorUrl = "http://127.0.0.1:" + admin.port();

                JsonNode running = awaitState("slow-1", "running", where);
                assertThat(running.at("/attempts").fields().next().getValue().path("worker").asText()).isEqualTo("w1");

                JsonNode durable = awaitState("captured-1", "durable", concat(where, new String[] {"--collector-url", collectorUrl}));
                assertThat(durable.at("/durable/file").asText()).endsWith(".jsonl");
                assertThat(durable.at("/durable/masked").asBoolean()).isFalse();
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    JsonNode capture = status("captured-1", concat(where, new String[] {"--collector-url", collectorUrl})).path("capture");
                    assertThat(capture.fields().next().getValue().path("status").asText()).isEqualTo("RETIRED");
                });
                awaitState("slow-1", "durable", where);
            }
        }
    }

    @Test
    void anAttemptLeftUnfinishedByAStoppedWorkerIsAbandonedNotRunning(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(2);
        String[] where = {"--bootstrap-servers", kafka.bootstrapServers(), "--topic-prefix", topics.prefix()};
        long t = System.currentTimeMillis();
        try (KafkaProducer<String, byte[]> producer = kafka.connection().producer("test")) {
            // What the traces topic holds after a worker died mid-rollout and the next owner re-ran it.
            for (TraceEvent e : List.of(
                    trace("twice", "a-killed", 0, TraceEvent.ROLLOUT_STARTED, t, "w-dead"),
                    trace("twice", "a-rerun", 0, TraceEvent.ROLLOUT_STARTED, t + 10_000, "w-alive"))) {
                producer.send(new ProducerRecord<>(topics.traces(), e.runId(), Json.encode(e))).get();
            }
        }

        JsonNode status = status("twice", where);

        assertThat(status.path("state").asText()).isEqualTo("running");
        assertThat(status.at("/attempts/a-killed/abandoned").asBoolean()).isTrue();
        assertThat(status.at("/attempts/a-rerun/worker").asText()).isEqualTo("w-alive");
        assertThat(status.at("/attempts/a-rerun").has("abandoned")).isFalse();
    }

    private static TraceEvent trace(String runId, String attempt, long seq, String type, long ts,
            String worker) {
        return new TraceEvent(runId, attempt, seq, type, ts,
                Json.object().put("worker_id", worker).put("partition", 0).put("offset", 0));
    }

    /** A rollout whose policy thinks for a second per step, so it is seen running. */
    private static RolloutRequest slowRequest(String runId) {
        RolloutRequest r = DemoCommand.demoRequest(runId, 2);
        r.policy().config().put("latency_ms", 1000);
        r.env().config().with("env_params").put("max_steps_per_episode", 4);
        return r;
    }

    private static JsonNode awaitState(String runId, String state, String[] where) {
        JsonNode[] last = new JsonNode[1];
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            last[0] = status(runId, where);
            return last[0].path("state").asText().equals(state);
        });
        return last[0];
    }

    private static JsonNode status(String runId, String[] where) {
        return fleet(concat(new String[] {"status", runId}, where)).summary();
    }

    private static void publish(KafkaCluster kafka, TopicNames topics, RolloutRequest... requests) throws Exception {
        RecordPublisher.publishAll(kafka.connection(), "test", RecordPublisher.requests(topics.requests(), List.of(requests)));
    }
}
