package dev.rolloutfleet.common.kafka;

import dev.rolloutfleet.common.topics.RunIdPartitioner;
import dev.rolloutfleet.common.topics.TopicLayout;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Where the cluster is and how to talk to it. {@code clientProperties} (TLS, SASL, anything
 * else) pass through to every client untouched and win over the fleet's defaults; Kafka itself
 * hides password-typed values when it logs its configs, and this class never logs them.
 */
public record KafkaConnection(String bootstrapServers, Map<String, String> clientProperties) {

    public KafkaConnection {
        Objects.requireNonNull(bootstrapServers, "bootstrap servers");
        if (bootstrapServers.isBlank()) {
            throw new IllegalArgumentException("bootstrap servers are empty; pass --bootstrap-servers host:port");
        }
        clientProperties = Map.copyOf(clientProperties == null ? Map.of() : clientProperties);
    }

    public static KafkaConnection of(String bootstrapServers) {
        return new KafkaConnection(bootstrapServers, Map.of());
    }

    /**
     * Producer settings for outputs that must not be lost or duplicated: idempotent, acks from
     * every in-sync replica, compressed, sized for long trajectories, keyed by run id.
     */
    public Map<String, Object> producerConfig(String clientId) {
        Map<String, Object> config = new HashMap<>();
        config.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        config.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        config.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        config.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        config.put(ProducerConfig.BATCH_SIZE_CONFIG, 64 * 1024);
        config.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, TopicLayout.DEFAULT_MAX_MESSAGE_BYTES);
        config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
        config.put(ProducerConfig.PARTITIONER_CLASS_CONFIG, RunIdPartitioner.class.getName());
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        config.putAll(clientProperties);
        return config;
    }

    /** Consumer settings: manual commits only, start from the beginning when the group has no offset. */
    public Map<String, Object> consumerConfig(String groupId, String clientId) {
        Map<String, Object> config = new HashMap<>();
        config.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        config.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        if (groupId != null) {
            config.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        }
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        config.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, TopicLayout.DEFAULT_MAX_MESSAGE_BYTES);
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        config.putAll(clientProperties);
        return config;
    }

    public Map<String, Object> adminConfig() {
        Map<String, Object> config = new HashMap<>();
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        config.putAll(clientProperties);
        return config;
    }

    public KafkaProducer<String, byte[]> producer(String clientId) {
        return new KafkaProducer<>(producerConfig(clientId));
    }

    public KafkaConsumer<String, byte[]> consumer(String groupId, String clientId) {
        return new KafkaConsumer<>(consumerConfig(groupId, clientId));
    }

    public Admin admin() {
        return Admin.create(adminConfig());
    }
}
