package dev.rolloutfleet.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.codahale.metrics.MetricRegistry;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.collector.Collector;
import dev.rolloutfleet.collector.CollectorConfig;
import dev.rolloutfleet.collector.CollectorListener;
import dev.rolloutfleet.common.testing.KafkaCluster;
import dev.rolloutfleet.common.testing.RealKafka;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.worker.Worker;
import dev.rolloutfleet.worker.sim.SimLlmServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole capture path on real parts: a worker running the OpenAI-compatible policy against the
 * simulated inference server (real HTTP on 127.0.0.1), token ids published per call, and a
 * collector rebuilding them into a trainable sequence.
 */
@ExtendWith(RealKafka.class)
class LlmCaptureEndToEndTest {

    @TempDir
    Path dataDir;

    static RolloutRequest llmRequest(String runId, String inferenceUrl, int steps) {
        ObjectNode envConfig = Json.object();
        envConfig.putObject("env_params").put("max_steps_per_episode", steps);
        ObjectNode policyConfig = Json.object().put("inference_url", inferenceUrl).put("model", "sim-1").put("max_retries", 6);
        policyConfig.putObject("token_id_capture").put("enabled", true).put("all_agents", true);
        return new RolloutRequest(SchemaVersion.CURRENT, runId, null,
                new RolloutRequest.EnvSpec("corridor", 7L, envConfig), new RolloutRequest.PolicySpec("openai", policyConfig),
                null, null, RolloutRequest.ON_DONE_TERMINATE, null, "rl", null, null, null, null);
    }

    private Map<String, JsonNode> run(KafkaCluster kafka, SimLlmServer.Faults faults, int rollouts) throws Exception {
        TopicNames topics = kafka.freshTopics(2);
        try (SimLlmServer sim = SimLlmServer.start("127.0.0.1", 0, "sim-1", SimLlmServer.Latency.ZERO, faults);
                Worker ignored = Worker.start(EndToEndTest.workerConfig(kafka, topics), new MetricRegistry());
                Collector alsoIgnored = Collector.start(EndToEndTest.collectorConfig(kafka, topics, dataDir),
                        new MetricRegistry(), CollectorListener.NONE);
                KafkaProducer<String, byte[]> producer = kafka.connection().producer("submit")) {
            for (int i = 0; i < rollouts; i++) {
                RolloutRequest request = llmRequest("llm-" + i, sim.baseUrl(), 4);
                producer.send(new ProducerRecord<>(topics.requests(), request.kafkaKey(), Json.encode(request))).get();
            }
            await().atMost(Duration.ofSeconds(90)).until(() -> EndToEndTest.durableLines(dataDir).size() == rollouts);
        }
        return EndToEndTest.durableLines(dataDir).stream().collect(Collectors.toMap(l -> l.get("run_id").asText(), l -> l));
    }

    @Test
    void anLlmRolloutWithTokenCaptureBecomesATrainableTokenSequence(KafkaCluster kafka) throws Exception {
        Map<String, JsonNode> lines = run(kafka, SimLlmServer.Faults.NONE, 4);
        for (JsonNode line : lines.values()) {
            assertThat(line.get("status").asText()).isEqualTo("ok");
            assertThat(line.at("/capture/participating").asBoolean()).isTrue();
            assertThat(line.get("mask_sample").asBoolean()).as(line.at("/capture_build/diagnostics").toString()).isFalse();
            int turns = line.get("turn_spans").size();
            assertThat(turns).isEqualTo(line.at("/metrics/num_steps").asInt());
            assertThat(line.get("tokens").size()).isEqualTo(line.get("loss_mask").size()).isEqualTo(line.get("logprobs").size());
            // Every generated token is a loss token, and each turn's generation decodes to its tool call.
            JsonNode span = line.get("turn_spans").get(0);
            StringBuilder generated = new StringBuilder();
            for (int i = span.get("generation_start").asInt(); i < span.get("generation_end").asInt(); i++) {
                assertThat(line.get("loss_mask").get(i).asInt()).isEqualTo(1);
                generated.append((char) (line.get("tokens").get(i).asInt() - 3));
            }
            assertThat(generated.toString()).startsWith("<tool_call>{\"name\":\"move\"");
        }
    }

    @Test
    void everyCaptureEntryLandsOnThePartitionNumberOfItsResultFor200RunIds(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(5);
        try (SimLlmServer sim = SimLlmServer.start("127.0.0.1", 0, "sim-1", SimLlmServer.Latency.ZERO,
                SimLlmServer.Faults.NONE);
                Worker ignored = Worker.start(EndToEndTest.workerConfig(kafka, topics), new MetricRegistry());
                KafkaProducer<String, byte[]> producer = kafka.connection().producer("submit")) {
            for (int i = 0; i < 200; i++) {
                RolloutRequest request = llmRequest(KafkaCluster.uniqueName("p"), sim.baseUrl(), 1);
                producer.send(new ProducerRecord<>(topics.requests(), request.kafkaKey(), Json.encode(request)));
            }
            producer.flush();
            Map<String, Integer> resultPartitions = new java.util.HashMap<>();
            await().atMost(Duration.ofSeconds(120)).until(() -> {
                TopicRecords.scan(kafka, topics.results())
                        .forEach(r -> resultPartitions.put(r.key(), r.partition()));
                return resultPartitions.size() == 200;
            });
            var entries = TopicRecords.scan(kafka, topics.tokenCapture());
            assertThat(entries).hasSizeGreaterThanOrEqualTo(200);
            assertThat(entries).allSatisfy(e -> assertThat(e.partition())
                    .as("partition of %s", e.key()).isEqualTo(resultPartitions.get(e.key().substring(0, e.key().indexOf('/')))));
            assertThat(new java.util.HashSet<>(resultPartitions.values())).hasSize(5);
        }
    }

    @Test
    void retriesRideOutRateLimitsAndServerErrors(KafkaCluster kafka) throws Exception {
        Map<String, JsonNode> lines = run(kafka, new SimLlmServer.Faults(0.2, 0.2, 0, 0), 3);
        assertThat(lines.values()).allSatisfy(line -> {
            assertThat(line.get("status").asText()).isEqualTo("ok");
            assertThat(line.get("mask_sample").asBoolean()).isFalse();
        });
    }

    @Test
    void aDriftingChatTemplateIsMaskedNotTrainedOn(KafkaCluster kafka) throws Exception {
        Map<String, JsonNode> lines = run(kafka, new SimLlmServer.Faults(0, 0, 1.0, 0), 2);
        assertThat(lines.values()).allSatisfy(line -> {
            assertThat(line.get("mask_sample").asBoolean()).isTrue();
            assertThat(line.get("mask_reason").asText()).isIn("multi_root", "multi_chain");
            assertThat(line.has("tokens")).isFalse();
        });
        assertThat(List.copyOf(lines.keySet())).hasSize(2);
    }
}
