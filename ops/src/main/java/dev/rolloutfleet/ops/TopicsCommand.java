package dev.rolloutfleet.ops;

import dev.rolloutfleet.common.topics.TopicLayout;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.topics.TopicSetup;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code fleet topics create|describe|verify}: the fleet's topics under a prefix. */
@Command(name = "topics", mixinStandardHelpOptions = true,
        description = "Create, describe or verify the fleet's topics (honours --topic-prefix).")
final class TopicsCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "ACTION", description = "create, describe or verify")
    String action;

    @Mixin
    KafkaOptions kafka;

    @Option(names = "--partitions", defaultValue = "12", description = "Partitions of requests, results, capture, traces (create; default ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--replication-factor", defaultValue = "3", description = "Replication factor (create; default ${DEFAULT-VALUE}).")
    short replicationFactor;

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        TopicNames names = kafka.topics();
        TopicLayout layout = TopicLayout.of(names, partitions, replicationFactor);
        try (Admin admin = kafka.connection().admin()) {
            TopicSetup setup = new TopicSetup(admin);
            switch (action) {
                case "create" -> {
                    List<String> created = setup.ensure(layout);
                    out.println(created.isEmpty() ? "all topics already exist" : "created " + String.join(", ", created));
                    return 0;
                }
                case "verify" -> {
                    var existing = admin.listTopics().names().get(60, TimeUnit.SECONDS);
                    List<String> missing = names.all().stream().filter(t -> !existing.contains(t)).toList();
                    if (!missing.isEmpty()) {
                        out.println("missing topics: " + String.join(", ", missing) + " (run: fleet topics create)");
                        return 1;
                    }
                    setup.verify(layout);
                    out.println("ok: every topic exists, results and token-capture are co-partitioned");
                    return 0;
                }
                case "describe" -> {
                    var existing = admin.listTopics().names().get(60, TimeUnit.SECONDS);
                    List<String> present = names.all().stream().filter(existing::contains).toList();
                    Map<String, TopicDescription> described = admin.describeTopics(present).allTopicNames().get(60, TimeUnit.SECONDS);
                    List<ConfigResource> resources = present.stream()
                            .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList();
                    Map<ConfigResource, Config> configs = admin.describeConfigs(resources).all().get(60, TimeUnit.SECONDS);
                    out.printf(Locale.ROOT, "%-40s %10s %12s %s%n", "topic", "partitions", "replication", "cleanup.policy");
                    for (String topic : names.all()) {
                        TopicDescription d = described.get(topic);
                        if (d == null) {
                            out.printf(Locale.ROOT, "%-40s %10s%n", topic, "missing");
                            continue;
                        }
                        Config c = configs.get(new ConfigResource(ConfigResource.Type.TOPIC, topic));
                        out.printf(Locale.ROOT, "%-40s %10d %12d %s%n", topic, d.partitions().size(),
                                d.partitions().get(0).replicas().size(), c.get(TopicConfig.CLEANUP_POLICY_CONFIG).value());
                    }
                    return 0;
                }
                default -> {
                    System.err.println("unknown action \"" + action + "\"; use create, describe or verify");
                    return 2;
                }
            }
        }
    }
}
