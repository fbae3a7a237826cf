package dev.rolloutfleet.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import com.codahale.metrics.MetricRegistry;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.rolloutfleet.collector.Collector;
import dev.rolloutfleet.collector.CollectorListener;
import dev.rolloutfleet.common.metrics.PrometheusText;
import dev.rolloutfleet.common.testing.KafkaCluster;
import dev.rolloutfleet.common.testing.RealKafka;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.worker.Worker;
import dev.rolloutfleet.worker.WorkerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The compose files and Kubernetes manifests cannot be run here (no Docker engine, no cluster),
 * so they are checked for what would break them: they parse, every fleet command line in them is
 * one the CLI accepts, every {@code FLEET_*} variable is one it reads, and the dashboard asks for
 * metrics the services really export.
 */
@ExtendWith(RealKafka.class)
class DeploymentFilesTest {

    private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
    private static final ObjectMapper YAML = new YAMLMapper();

    @Test
    void composeDefinesTheWholeFleetWithScalableWorkersAndCommandsTheCliAccepts() throws IOException {
        JsonNode compose = YAML.readTree(REPO.resolve("compose/docker-compose.yml").toFile());
        JsonNode services = compose.get("services");
        assertThat(Files.readString(REPO.resolve("compose/docker-compose.yml"))).as("merge keys are YAML 1.1 only; keep it plain")
                .doesNotContain("<<:");

        assertThat(iterable(services.fieldNames())).contains("kafka", "topic-setup", "worker", "collector", "sim-llm",
                "prometheus", "grafana");
        assertThat(services.at("/kafka/image").asText()).startsWith("apache/kafka:");
        assertThat(services.at("/kafka/environment/KAFKA_PROCESS_ROLES").asText()).isEqualTo("broker,controller");
        assertThat(services.get("worker").has("ports")).as("fixed host ports would stop --scale worker=N").isFalse();
        assertThat(services.get("worker").has("container_name")).isFalse();
        assertThat(services.at("/collector/volumes/0").asText()).endsWith(":/data");
        assertThat(services.at("/collector/command").toString()).contains("\"--data-dir\",\"/data\"");
        assertThat(REPO.resolve("compose").resolve(services.at("/worker/build/context").asText()).normalize()
                .resolve(services.at("/worker/build/dockerfile").asText())).as("the image is built from this repository")
                .isEqualTo(REPO.resolve("Dockerfile")).exists();
        for (String fleetService : List.of("topic-setup", "worker", "collector", "sim-llm")) {
            assertAccepted(args(services.get(fleetService).get("command")));
            services.get(fleetService).path("environment").fieldNames().forEachRemaining(DeploymentFilesTest::assertKnownVariable);
        }
        assertThat(Files.readString(REPO.resolve("Dockerfile"))).contains("dev.rolloutfleet.ops.FleetCommand")
                .contains("ops/target/fleet-ops.jar").contains("ops/target/lib");
    }

    @Test
    void prometheusScrapesEveryFleetServiceOnItsMetricsPort() throws IOException {
        JsonNode config = YAML.readTree(REPO.resolve("compose/prometheus/prometheus.yml").toFile());
        List<String> jobs = new ArrayList<>();
        config.get("scrape_configs").forEach(job -> jobs.add(job.get("job_name").asText()));

        assertThat(jobs).containsExactlyInAnyOrder("worker", "collector", "sim-llm");
        assertThat(config.at("/scrape_configs/0/dns_sd_configs/0/port").asInt()).as("every scaled worker, found by DNS").isEqualTo(9400);
        assertThat(config.toString()).contains("collector:9400").contains("sim-llm:9400");
    }

    @Test
    void theGrafanaDashboardAsksOnlyForMetricsTheServicesExport(KafkaCluster kafka, @TempDir Path dir) throws Exception {
        JsonNode dashboard = new ObjectMapper().readTree(REPO.resolve("compose/grafana/dashboards/rollout-fleet.json").toFile());
        JsonNode provider = YAML.readTree(REPO.resolve("compose/grafana/provisioning/dashboards/fleet.yml").toFile());
        JsonNode compose = YAML.readTree(REPO.resolve("compose/docker-compose.yml").toFile());
        assertThat(compose.at("/services/grafana/volumes").toString()).contains(provider.at("/providers/0/options/path").asText());

        Set<String> wanted = new HashSet<>();
        Pattern metric = Pattern.compile("\\b((?:worker|collector)_[a-z_]+)\\b");
        dashboard.get("panels").forEach(panel -> panel.get("targets").forEach(target -> {
            Matcher m = metric.matcher(target.get("expr").asText());
            while (m.find()) {
                if (!m.group(1).endsWith("_")) { // collector_masked_.+_total: one per reason, made when first seen
                    wanted.add(m.group(1));
                }
            }
        }));
        assertThat(dashboard.get("panels").size()).isGreaterThanOrEqualTo(6);

        TopicNames topics = kafka.freshTopics(1);
        MetricRegistry registry = new MetricRegistry();
        try (Worker ignored = Worker.start(WorkerConfig.builder(kafka.connection(), topics, "w").groupId(KafkaCluster.uniqueName("g")).build(),
                registry);
                Collector alsoIgnored = Collector.start(EndToEndTest.collectorConfig(kafka, topics, dir), registry, CollectorListener.NONE)) {
            String exported = PrometheusText.write(registry);
            assertThat(wanted).isNotEmpty().allSatisfy(name -> assertThat(exported).as(name).containsPattern("(?m)^" + name + "[ {]"));
        }
    }

    @Test
    void kubernetesManifestsParseAndRunCommandsTheCliAccepts() throws IOException {
        List<JsonNode> docs = new ArrayList<>();
        try (Stream<Path> files = Files.list(REPO.resolve("ops/k8s"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
                YAML.readValues(new YAMLFactory().createParser(file.toFile()), JsonNode.class).readAll(docs);
            }
        }
        List<String> kinds = docs.stream().map(d -> d.path("kind").asText()).toList();
        assertThat(kinds).contains("Deployment", "ScaledObject", "StatefulSet", "ConfigMap", "Service", "Job", "Kustomization");

        JsonNode scaled = only(docs, "ScaledObject");
        assertThat(scaled.at("/spec/scaleTargetRef/name").asText()).isEqualTo(only(docs, "Deployment").at("/metadata/name").asText());
        assertThat(scaled.at("/spec/triggers/0/type").asText()).isEqualTo("kafka");
        assertThat(scaled.at("/spec/triggers/0/metadata/topic").asText()).isEqualTo(TopicNames.defaults().requests());
        assertThat(scaled.at("/spec/triggers/0/metadata/consumerGroup").asText()).isEqualTo(WorkerConfig.DEFAULT_GROUP_ID);

        JsonNode collector = only(docs, "StatefulSet");
        assertThat(collector.at("/spec/volumeClaimTemplates/0/metadata/name").asText())
                .isEqualTo(collector.at("/spec/template/spec/containers/0/volumeMounts/0/name").asText());
        assertThat(collector.at("/spec/template/spec/containers/0/volumeMounts/0/mountPath").asText()).isEqualTo("/data");

        only(docs, "ConfigMap").get("data").fieldNames().forEachRemaining(DeploymentFilesTest::assertKnownVariable);
        for (JsonNode doc : docs) {
            for (JsonNode container : doc.at("/spec/template/spec/containers")) {
                assertAccepted(args(container.get("args")));
                container.path("env").forEach(env -> {
                    if (env.get("name").asText().startsWith("FLEET_")) {
                        assertKnownVariable(env.get("name").asText());
                    }
                });
            }
        }
    }

    /** Parses the command line as the image's entry point would, without running it. */
    private static void assertAccepted(List<String> args) {
        assertThatCode(() -> new CommandLine(new FleetCommand()).parseArgs(args.toArray(String[]::new)))
                .as("fleet %s", String.join(" ", args)).doesNotThrowAnyException();
    }

    private static void assertKnownVariable(String name) {
        if (!name.startsWith("FLEET_")) {
            return;
        }
        assertThat(fleetVariables()).as("a FLEET_ variable the CLI reads").contains(name);
    }

    /** Every {@code FLEET_*} variable named in an option default of any fleet subcommand. */
    private static Set<String> fleetVariables() {
        Set<String> names = new HashSet<>();
        // Without interpolation the defaults read as written: ${env:FLEET_X:-...}.
        collect(new CommandLine(new FleetCommand()).setInterpolateVariables(false), names);
        return names;
    }

    private static void collect(CommandLine command, Set<String> names) {
        command.getCommandSpec().options().forEach(option -> {
            String raw = option.defaultValue();
            Matcher m = Pattern.compile("\\$\\{env:(FLEET_[A-Z_]+)").matcher(raw == null ? "" : raw);
            while (m.find()) {
                names.add(m.group(1));
            }
        });
        command.getSubcommands().values().forEach(sub -> collect(sub, names));
    }

    private static List<String> args(JsonNode list) {
        List<String> out = new ArrayList<>();
        list.forEach(a -> out.add(a.asText()));
        return out;
    }

    private static JsonNode only(List<JsonNode> docs, String kind) {
        List<JsonNode> found = docs.stream().filter(d -> kind.equals(d.path("kind").asText())).toList();
        assertThat(found).as(kind).hasSize(1);
        return found.get(0);
    }

    private static List<String> iterable(java.util.Iterator<String> names) {
        List<String> out = new ArrayList<>();
        names.forEachRemaining(out::add);
        return out;
    }
}
