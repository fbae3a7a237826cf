package dev.rolloutfleet.ops;

import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.topics.TopicNames;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import picocli.CommandLine.Option;

/**
 * Where the cluster is and how to reach it, shared by every command that talks to Kafka. Each
 * setting is defined once here: its flag, its environment variable and its default.
 */
public final class KafkaOptions {

    @Option(names = "--bootstrap-servers", paramLabel = "HOST:PORT,...",
            defaultValue = "${env:FLEET_BOOTSTRAP_SERVERS:-127.0.0.1:9092}",
            description = "Kafka bootstrap servers (env FLEET_BOOTSTRAP_SERVERS; default ${DEFAULT-VALUE}).")
    String bootstrapServers;

    @Option(names = "--kafka-config", paramLabel = "FILE", defaultValue = "${env:FLEET_KAFKA_CONFIG}",
            description = "Properties file of Kafka client settings passed through untouched (TLS, SASL, ...)"
                    + " (env FLEET_KAFKA_CONFIG).")
    Path kafkaConfig;

    @Option(names = "--topic-prefix", paramLabel = "PREFIX", defaultValue = "${env:FLEET_TOPIC_PREFIX:-}",
            description = "Prefix of every topic name, e.g. team-a. (env FLEET_TOPIC_PREFIX; default none).")
    String topicPrefix;

    KafkaConnection connection() {
        return new KafkaConnection(bootstrapServers, clientProperties(kafkaConfig));
    }

    TopicNames topics() {
        return new TopicNames(topicPrefix);
    }

    static Map<String, String> clientProperties(Path file) {
        if (file == null) {
            return Map.of();
        }
        Properties properties = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            properties.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read --kafka-config " + file, e);
        }
        Map<String, String> map = new HashMap<>();
        properties.stringPropertyNames().forEach(name -> map.put(name, properties.getProperty(name)));
        return map;
    }
}
