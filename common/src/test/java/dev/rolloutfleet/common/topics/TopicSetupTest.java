package dev.rolloutfleet.common.topics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rolloutfleet.common.testing.KafkaCluster;
import dev.rolloutfleet.common.testing.RealKafka;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealKafka.class)
class TopicSetupTest {

    @Test
    void ensureCreatesEveryTopicOnceAndIsIdempotent(KafkaCluster kafka) throws Exception {
        TopicNames names = new TopicNames(KafkaCluster.uniqueName("ensure") + ".");
        TopicLayout layout = TopicLayout.of(names, 3, (short) 1);
        try (Admin admin = kafka.admin()) {
            TopicSetup setup = new TopicSetup(admin);
            assertThat(setup.ensure(layout)).containsExactlyInAnyOrderElementsOf(names.all());
            assertThat(setup.ensure(layout)).isEmpty();

            assertThat(admin.listTopics().names().get()).containsAll(names.all());
            ConfigResource capture = new ConfigResource(ConfigResource.Type.TOPIC, names.tokenCapture());
            Config config = admin.describeConfigs(List.of(capture)).all().get().get(capture);
            assertThat(config.get(TopicConfig.CLEANUP_POLICY_CONFIG).value()).isEqualTo("compact");
            assertThat(admin.describeTopics(List.of(names.results(), names.tokenCapture())).allTopicNames().get())
                    .allSatisfy((name, d) -> assertThat(d.partitions()).hasSize(3));
        }
    }

    @Test
    void mismatchedResultAndCapturePartitionCountsAreRefusedWithWhatToDo(KafkaCluster kafka) throws Exception {
        TopicNames names = new TopicNames(KafkaCluster.uniqueName("mismatch") + ".");
        try (Admin admin = kafka.admin()) {
            admin.createTopics(List.of(new NewTopic(names.results(), 4, (short) 1),
                    new NewTopic(names.tokenCapture(), 2, (short) 1)
                            .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, "compact")))).all().get();
            TopicSetup setup = new TopicSetup(admin);
            assertThatThrownBy(() -> setup.ensure(TopicLayout.of(names, 4, (short) 1)))
                    .isInstanceOf(TopicMismatchException.class)
                    .hasMessageContaining(names.results() + " has 4 partitions but " + names.tokenCapture() + " has 2")
                    .hasMessageContaining("--partitions 4");
        }
    }

    @Test
    void aPrefixIsAppliedToEveryName() {
        TopicNames names = new TopicNames("team-a.");
        assertThat(names.all()).allSatisfy(n -> assertThat(n).startsWith("team-a.rollout."));
        assertThat(TopicNames.defaults().requests()).isEqualTo("rollout.requests");
        assertThatThrownBy(() -> new TopicNames("bad prefix")).hasMessageContaining("topic prefix");
    }
}
