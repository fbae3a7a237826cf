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
    record Ran(int exit, String out) {}

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
