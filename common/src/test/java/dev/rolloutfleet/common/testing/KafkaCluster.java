package dev.rolloutfleet.common.testing;

import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.topics.TopicLayout;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.topics.TopicSetup;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;

/**
 * The real broker a test talks to, as chosen by {@link RealKafka}. Tests share one broker per
 * JVM, so each test takes its own topic prefix and group ids from {@link #uniqueName(String)}.
 */
public record KafkaCluster(String bootstrapServers, String source) {

    public KafkaConnection connection() {
        return KafkaConnection.of(bootstrapServers);
    }

    public Admin admin() {
        return connection().admin();
    }

    /** A name no other test in this run uses, for topic prefixes, group ids and run ids. */
    public static String uniqueName(String base) {
        return base + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Fresh topics under a unique prefix with {@code partitions} partitions each. */
    public TopicNames freshTopics(int partitions) {
        TopicNames names = new TopicNames(uniqueName("t") + ".");
        try (Admin admin = admin()) {
            new TopicSetup(admin).ensure(TopicLayout.of(names, partitions, (short) 1));
        }
        return names;
    }
}
