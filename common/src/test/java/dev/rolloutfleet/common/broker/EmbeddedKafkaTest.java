package dev.rolloutfleet.common.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rolloutfleet.common.kafka.KafkaConnection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

class EmbeddedKafkaTest {

    @Test
    void startsServesARoundTripAndLeavesNoProcessBehind() throws Exception {
        long pid;
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            pid = kafka.pid();
            assertThat(ProcessHandle.of(pid)).map(ProcessHandle::isAlive).contains(true);
            assertThat(kafka.bootstrapServers()).startsWith("127.0.0.1:");

            KafkaConnection connection = KafkaConnection.of(kafka.bootstrapServers());
            try (Admin admin = connection.admin()) {
                admin.createTopics(List.of(new NewTopic("round-trip", 1, (short) 1))).all().get();
            }
            try (KafkaProducer<String, byte[]> producer = connection.producer("test-producer")) {
                producer.send(new ProducerRecord<>("round-trip", "k", "hello".getBytes(StandardCharsets.UTF_8))).get();
            }
            List<ConsumerRecord<String, byte[]>> received = new ArrayList<>();
            try (KafkaConsumer<String, byte[]> consumer = connection.consumer("round-trip-group", "test-consumer")) {
                consumer.subscribe(List.of("round-trip"));
                await().atMost(Duration.ofSeconds(30)).until(() -> {
                    consumer.poll(Duration.ofMillis(200)).forEach(received::add);
                    return !received.isEmpty();
                });
            }
            assertThat(received).singleElement().satisfies(r -> {
                assertThat(r.key()).isEqualTo("k");
                assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("hello");
            });
        }
        Optional<ProcessHandle> after = ProcessHandle.of(pid);
        assertThat(after.isEmpty() || !after.get().isAlive()).as("broker process %d is gone", pid).isTrue();
    }

    @Test
    void brokerExitsWhenItsParentDiesWithoutShutdownHooks() throws Exception {
        // A parent JVM that starts a broker and is then SIGKILLed: the child must follow it.
        List<String> command = List.of(
                java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"),
                ParentThatStartsABroker.class.getName());
        Process parent = new ProcessBuilder(command).redirectErrorStream(true).start();
        var lines = new java.io.BufferedReader(new java.io.InputStreamReader(parent.getInputStream(), StandardCharsets.UTF_8));
        long brokerPid = -1;
        String line;
        while ((line = lines.readLine()) != null) {
            if (line.startsWith("BROKER_PID=")) {
                brokerPid = Long.parseLong(line.substring("BROKER_PID=".length()).trim());
                break;
            }
        }
        assertThat(brokerPid).as("the parent reported its broker's pid").isPositive();
        parent.destroyForcibly().waitFor();
        long pid = brokerPid;
        await().atMost(Duration.ofSeconds(40)).until(() -> ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true));
    }

    /** Main of the parent JVM in {@link #brokerExitsWhenItsParentDiesWithoutShutdownHooks()}. */
    public static final class ParentThatStartsABroker {
        public static void main(String[] args) throws Exception {
            EmbeddedKafka kafka = EmbeddedKafka.start();
            System.out.println("BROKER_PID=" + kafka.pid());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
