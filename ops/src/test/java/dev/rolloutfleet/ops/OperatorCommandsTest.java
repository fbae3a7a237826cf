package dev.rolloutfleet.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.codahale.metrics.MetricRegistry;
import dev.rolloutfleet.common.testing.KafkaCluster;
import dev.rolloutfleet.common.testing.RealKafka;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.TraceEvent;
import dev.rolloutfleet.worker.Worker;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import picocli.CommandLine;

@ExtendWith(RealKafka.class)
class OperatorCommandsTest {

    /** Runs a fleet command in this JVM; returns its exit code and what it printed. */
    record Ran(int exit, String out) {
        /** The JSON object every command prints as its last line. */
        com.fasterxml.jackson.databind.JsonNode summary() {
            List<String> lines = out.lines().toList();
            return Json.decode(lines.get(lines.size() - 1), com.fasterxml.jackson.databind.JsonNode.class);
        }
    }

    static Ran fleet(String... args) {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream original = System.out;
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            int exit = new CommandLine(new FleetCommand()).execute(args);
            return new Ran(exit, captured.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(original);
        }
    }

    static String[] concat(String[] a, String[] b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void submitPublishesWaitsUntilDurableAndEndsWithAJsonSummary(KafkaCluster kafka,
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        TopicNames topics = kafka.freshTopics(2);
        try (Worker ignored = Worker.start(EndToEndTest.workerConfig(kafka, topics), new MetricRegistry());
                dev.rolloutfleet.collector.Collector alsoIgnored = dev.rolloutfleet.collector.Collector.start(
                        EndToEndTest.collectorConfig(kafka, topics, dir.resolve("data")), new MetricRegistry(),
                        dev.rolloutfleet.collector.CollectorListener.NONE)) {
            Ran generated = fleet("submit", "--env", "corridor", "--policy", "scripted", "--rollouts", "6",
                    "--bootstrap-servers", kafka.bootstrapServers(), "--topic-prefix", topics.prefix());
            assertThat(generated.exit()).isZero();
            com.fasterxml.jackson.databind.JsonNode summary = generated.summary();
            assertThat(summary.get("durable").asInt()).isEqualTo(6);
            assertThat(summary.at("/statuses/ok").asInt()).isEqualTo(6);
            assertThat(summary.at("/duration_ms/p50").isNumber()).isTrue();
            assertThat(summary.at("/queue_delay_ms/p99").isNumber()).isTrue();

            java.nio.file.Path file = dir.resolve("requests.jsonl");
            java.nio.file.Files.writeString(file, Json.encodeToString(DemoCommand.demoRequest("from-file-1", 1)) + "\n"
                    + Json.encodeToString(DemoCommand.demoRequest("from-file-2", 2)) + "\n");
            Ran fromFile = fleet("submit", "--file", file.toString(), "--bootstrap-servers", kafka.bootstrapServers(),
                    "--topic-prefix", topics.prefix());
            assertThat(fromFile.exit()).isZero();
            assertThat(fromFile.out().lines().reduce((a, b) -> b).orElseThrow()).contains("\"durable\":2");

            java.nio.file.Files.writeString(file, "{\"run_id\":\"x\",\"env\":{\"env_name\":\"corridor\"}}\n");
            assertThat(fleet("submit", "--file", file.toString(), "--bootstrap-servers", kafka.bootstrapServers(),
                    "--topic-prefix", topics.prefix()).exit()).as("an invalid line is refused before anything is sent").isNotZero();
        }
    }

    @Test
    void topicsAreCreatedUnderAPrefixThenVerifiedAndDescribed(KafkaCluster kafka) {
        String prefix = KafkaCluster.uniqueName("ops") + ".";
        String bootstrap = kafka.bootstrapServers();
        assertThat(fleet("topics", "verify", "--bootstrap-servers", bootstrap, "--topic-prefix", prefix).exit()).isEqualTo(1);
        Ran created = fleet("topics", "create", "--bootstrap-servers", bootstrap, "--topic-prefix", prefix,
                "--partitions", "3", "--replication-factor", "1");
        assertThat(created.exit()).isZero();
        assertThat(created.out()).contains(prefix + "rollout.requests");
        assertThat(fleet("topics", "create", "--bootstrap-servers", bootstrap, "--topic-prefix", prefix,
                "--partitions", "3", "--replication-factor", "1").out()).contains("all topics already exist");
        Ran verified = fleet("topics", "verify", "--bootstrap-servers", bootstrap, "--topic-prefix", prefix);
        assertThat(verified.exit()).isZero();
        assertThat(verified.out()).contains("co-partitioned");
        Ran described = fleet("topics", "describe", "--bootstrap-servers", bootstrap, "--topic-prefix", prefix);
        assertThat(described.out().lines().filter(l -> l.startsWith(prefix + "rollout.token-capture")))
                .singleElement().satisfies(l -> assertThat(l).contains("compact").contains(" 3 "));
    }

    @Test
    void tracePrintsTheTimelineOfOneRunPerAttemptAndRawEventsWithJson(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(3);
        try (Worker ignored = Worker.start(EndToEndTest.workerConfig(kafka, topics), new MetricRegistry());
                KafkaProducer<String, byte[]> producer = kafka.connection().producer("submit")) {
            for (String runId : List.of("traced-1", "traced-2")) {
                RolloutRequest request = DemoCommand.demoRequest(runId, 4);
                producer.send(new ProducerRecord<>(topics.requests(), request.kafkaKey(), Json.encode(request))).get();
            }
            String prefix = topics.prefix();
            await().atMost(Duration.ofSeconds(60)).until(() -> fleet("trace", "traced-1", "--bootstrap-servers",
                    kafka.bootstrapServers(), "--topic-prefix", prefix).out().contains("rollout_finished"));
            Ran timeline = fleet("trace", "traced-1", "--bootstrap-servers", kafka.bootstrapServers(), "--topic-prefix", prefix);
            assertThat(timeline.exit()).isZero();
            assertThat(timeline.out()).contains("run traced-1 attempt ").contains("rollout_started").contains("env corridor")
                    .contains("env_step").contains("rollout_finished").contains("ok after").doesNotContain("traced-2");
            Ran raw = fleet("trace", "traced-1", "--json", "--bootstrap-servers", kafka.bootstrapServers(), "--topic-prefix", prefix);
            assertThat(raw.out().lines().map(l -> Json.decode(l, TraceEvent.class)).toList())
                    .allSatisfy(e -> assertThat(e.runId()).isEqualTo("traced-1"));
            assertThat(fleet("trace", "never-ran", "--bootstrap-servers", kafka.bootstrapServers(), "--topic-prefix", prefix)
                    .exit()).isEqualTo(1);
        }
    }
}
