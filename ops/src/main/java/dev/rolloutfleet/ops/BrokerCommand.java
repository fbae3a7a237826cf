package dev.rolloutfleet.ops;

import dev.rolloutfleet.common.broker.EmbeddedKafka;
import dev.rolloutfleet.common.topics.TopicLayout;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.topics.TopicSetup;
import dev.rolloutfleet.common.kafka.KafkaConnection;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code fleet broker}: a local single-node Kafka broker for running services by hand. */
@Command(name = "broker", mixinStandardHelpOptions = true,
        description = "Start a local single-node Kafka broker (KRaft) on 127.0.0.1, create the topics, and print its address.")
final class BrokerCommand implements Callable<Integer> {

    @Option(names = "--dir", description = "Where the broker keeps its data (default: a temporary directory, removed on exit).")
    Path dir;

    @Option(names = "--partitions", defaultValue = "6", description = "Partitions per topic (default ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--topic-prefix", defaultValue = "", description = "Prefix of every topic name (default none).")
    String topicPrefix;

    @Override
    public Integer call() throws Exception {
        EmbeddedKafka kafka = dir == null ? EmbeddedKafka.start() : EmbeddedKafka.start(dir, false);
        try (Admin admin = KafkaConnection.of(kafka.bootstrapServers()).admin()) {
            new TopicSetup(admin).ensure(TopicLayout.of(new TopicNames(topicPrefix), partitions, (short) 1));
        }
        System.out.println("broker ready: --bootstrap-servers " + kafka.bootstrapServers() + "  (Ctrl-C stops it)");
        ProcessHandle brokerProcess = ProcessHandle.of(kafka.pid()).orElseThrow();
        return Services.runUntilStopped(() -> brokerProcess.onExit().join(), kafka::close);
    }
}
