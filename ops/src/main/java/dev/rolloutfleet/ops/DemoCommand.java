package dev.rolloutfleet.ops;

import com.codahale.metrics.MetricRegistry;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.collector.Collector;
import dev.rolloutfleet.collector.CollectorConfig;
import dev.rolloutfleet.collector.CollectorListener;
import dev.rolloutfleet.common.broker.EmbeddedKafka;
import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.metrics.MetricsHttpServer;
import dev.rolloutfleet.common.topics.TopicLayout;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.topics.TopicSetup;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.worker.Worker;
import dev.rolloutfleet.worker.WorkerConfig;
import dev.rolloutfleet.worker.env.CorridorEnvironment;
import dev.rolloutfleet.worker.env.CrafterLite;
import dev.rolloutfleet.worker.policy.OpenAiPolicy;
import dev.rolloutfleet.worker.policy.ScriptedPolicy;
import dev.rolloutfleet.worker.sim.SimLlmServer;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code fleet demo}: the whole path on one machine. An embedded broker, the simulated inference
 * server, one worker and one collector in this process; N requests submitted (an LLM policy in
 * crafter-lite, token capture and step rewards on, so durable lines carry rebuilt token
 * sequences); progress until every one is durable; a summary, and as the last line a JSON object
 * with the same numbers.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Run the fleet end to end on an embedded broker: submit rollouts, wait until all are durable.")
final class DemoCommand implements Callable<Integer> {

    @Option(names = "--rollouts", defaultValue = "100", description = "How many rollouts to submit (default ${DEFAULT-VALUE}).")
    int rollouts;

    @Option(names = "--data-dir", defaultValue = "./fleet-data", description = "Where durable records go (default ${DEFAULT-VALUE}).")
    Path dataDir;

    @Option(names = "--partitions", defaultValue = "6", description = "Partitions per topic (default ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--timeout", defaultValue = "PT10M", description = "Give up after this long, ISO-8601 (default ${DEFAULT-VALUE}).")
    Duration timeout;

    @Option(names = "--keep-running", description = "After the summary, keep the broker, worker, collector and simulated"
            + " server running (for fleet replay, trace, status) until Ctrl-C.")
    boolean keepRunning;

    @Override
    public Integer call() throws Exception {
        if (rollouts <= 0) {
            throw new IllegalArgumentException("--rollouts must be positive, got " + rollouts);
        }
        PrintStream out = System.out;
        PrintStream progress = System.err;
        Path data = dataDir.toAbsolutePath().normalize();
        progress.println("starting an embedded Kafka broker ...");
        long started = System.nanoTime();
        try (EmbeddedKafka broker = EmbeddedKafka.start();
                SimLlmServer sim = SimLlmServer.start("127.0.0.1", 0, "sim-1", new SimLlmServer.Latency(5, 0.05, 256),
                        SimLlmServer.Faults.NONE)) {
            KafkaConnection kafka = KafkaConnection.of(broker.bootstrapServers());
            TopicNames topics = TopicNames.defaults();
            try (Admin admin = kafka.admin()) {
                new TopicSetup(admin).ensure(TopicLayout.of(topics, partitions, (short) 1));
            }
            MetricRegistry registry = new MetricRegistry();
            Outcome outcome;
            try (Worker worker = Worker.start(WorkerConfig.builder(kafka, topics, "demo-worker").build(), registry);
                    Collector collector = Collector.start(CollectorConfig.defaults(kafka, topics, "demo-collector", data),
                            registry, CollectorListener.NONE)) {
                String batch = Long.toString(System.currentTimeMillis(), 36);
                Set<String> runIds = submit(kafka, topics, batch, sim.baseUrl());
                progress.printf(Locale.ROOT, "submitted %d rollouts (batch %s) to %s; waiting until durable ...%n",
                        rollouts, batch, broker.bootstrapServers());
                outcome = await(kafka, topics, runIds, worker, collector, progress);
                if (keepRunning) {
                    int exit = report(out, outcome, data, (System.nanoTime() - started) / 1e9);
                    return exit != 0 ? exit : keepRunning(broker, sim, registry, worker, collector, progress);
                }
            }
            return report(out, outcome, data, (System.nanoTime() - started) / 1e9);
        }
    }

    /** Serves the collector's metrics and admin endpoint and waits for Ctrl-C. */
    private static int keepRunning(EmbeddedKafka broker, SimLlmServer sim, MetricRegistry registry, Worker worker, Collector collector,
            PrintStream progress) throws InterruptedException {
        String bootstrap = broker.bootstrapServers();
        String inferenceUrl = sim.baseUrl();
        // On Ctrl-C the services stop first, then the broker they commit to.
        broker.stopWithCaller();
        MetricsHttpServer admin = MetricsHttpServer.start("127.0.0.1", 0, registry, collector::isReady, collector::isHealthy);
        CollectorCommand.serveAdmin(admin, collector);
        progress.printf(Locale.ROOT, "%nthe fleet keeps running (Ctrl-C stops it): Kafka at %1$s, the simulated inference server"
                + " at %3$s (use it as policy.config.inference_url). From another terminal:%n"
                + "  ./fleet replay --bootstrap-servers %1$s --diff%n"
                + "  ./fleet trace RUN_ID --bootstrap-servers %1$s%n"
                + "  ./fleet status RUN_ID --bootstrap-servers %1$s --collector-url http://127.0.0.1:%2$d%n"
                + "  curl -s http://127.0.0.1:%2$d/metrics%n", bootstrap, admin.port(), inferenceUrl);
        return Services.runUntilStopped(collector::awaitTermination, () -> {
            collector.close();
            worker.close();
        }, admin, sim, broker);
    }

    private Set<String> submit(KafkaConnection kafka, TopicNames topics, String batch, String inferenceUrl) throws Exception {
        List<RolloutRequest> requests = new ArrayList<>();
        for (int i = 0; i < rollouts; i++) {
            requests.add(llmRequest("demo-" + batch + "-" + i, i, inferenceUrl));
        }
        RecordPublisher.publishAll(kafka, "fleet-demo-submit", RecordPublisher.requests(topics.requests(), requests));
        Set<String> runIds = new HashSet<>();
        requests.forEach(r -> runIds.add(r.runId()));
        return runIds;
    }

    /**
     * A crafter-lite rollout whose policy is an LLM behind the simulated server, with token capture
     * and per-achievement step rewards on.
     */
    static RolloutRequest llmRequest(String runId, long seed, String inferenceUrl) {
        ObjectNode envConfig = Json.object();
        envConfig.putObject("env_params").put("max_steps_per_episode", 8);
        ObjectNode policyConfig = Json.object().put("inference_url", inferenceUrl).put("model", "sim-1").put("temperature", 0.7);
        policyConfig.putObject("token_id_capture").put("enabled", true).put("all_agents", true);
        policyConfig.putObject("step_rewards").put("enabled", true).put("mode", "decision_stepwise")
                .put("strategy", "per_achievement");
        return new RolloutRequest(SchemaVersion.CURRENT, runId, null,
                new RolloutRequest.EnvSpec(CrafterLite.NAME, seed, envConfig),
                new RolloutRequest.PolicySpec(OpenAiPolicy.NAME, policyConfig),
                null, null, RolloutRequest.ON_DONE_TERMINATE, null, "rl", null, null, null, null);
    }

    static RolloutRequest demoRequest(String runId, long seed) {
        ObjectNode envConfig = Json.object();
        envConfig.putObject("env_params").put("max_steps_per_episode", 12);
        return new RolloutRequest(SchemaVersion.CURRENT, runId, null,
                new RolloutRequest.EnvSpec(CorridorEnvironment.NAME, seed, envConfig),
                new RolloutRequest.PolicySpec(ScriptedPolicy.NAME, Json.object().put("epsilon", 0.2)),
                null, null, RolloutRequest.ON_DONE_TERMINATE, null, "rl", null, null, null, null);
    }

    /** How many awaited runs became durable, by status. */
    private record Outcome(int durable, Map<RolloutStatus, Integer> statuses, int masked) {}

    private Outcome await(KafkaConnection kafka, TopicNames topics, Set<String> runIds, Worker worker, Collector collector,
            PrintStream progress) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long begin = System.nanoTime();
        long nextReport = 0;
        try (DurableFollower follower = new DurableFollower(kafka, topics.durable(), runIds)) {
            while (follower.durableCount() < runIds.size() && System.nanoTime() < deadline) {
                if (!worker.isRunning() || !collector.isRunning()) {
                    progress.println("a service stopped unexpectedly; see the log above");
                    break;
                }
                follower.poll(Duration.ofMillis(200));
                if (System.nanoTime() >= nextReport) {
                    double seconds = (System.nanoTime() - begin) / 1e9;
                    progress.printf(Locale.ROOT, "  %s durable %d/%d  (%.1f/s)%n", ProgressBar.of(follower.durableCount(), runIds.size()),
                            follower.durableCount(), runIds.size(),
                            follower.durableCount() / Math.max(seconds, 0.001));
                    nextReport = System.nanoTime() + Duration.ofSeconds(1).toNanos();
                }
            }
            return new Outcome(follower.durableCount(), follower.statusCounts(), follower.maskedCount());
        }
    }

    private int report(PrintStream out, Outcome outcome, Path data, double seconds) throws Exception {
        int durable = outcome.durable();
        int ok = outcome.statuses().getOrDefault(RolloutStatus.OK, 0);
        int failed = durable - ok;
        List<Path> segments;
        try (Stream<Path> files = Files.list(data)) {
            segments = files.filter(p -> p.getFileName().toString().endsWith(".jsonl")).sorted().toList();
        }
        out.printf(Locale.ROOT, "rollout-fleet demo%n");
        out.printf(Locale.ROOT, "  submitted   %d%n", rollouts);
        out.printf(Locale.ROOT, "  durable     %d  (ok %d, not ok %d)%n", durable, ok, failed);
        out.printf(Locale.ROOT, "  trainable   %d token sequences rebuilt from captured token ids, %d masked%n",
                durable - outcome.masked(), outcome.masked());
        out.printf(Locale.ROOT, "  elapsed     %.1f s%n", seconds);
        out.printf(Locale.ROOT, "  records in  %s  (%d segment files)%n", data, segments.size());
        if (durable < rollouts) {
            out.printf(Locale.ROOT, "  NOT DURABLE %d rollouts did not become durable within %s%n", rollouts - durable, timeout);
        }
        ObjectNode summary = Json.object().put("submitted", rollouts).put("durable", durable).put("failed", failed)
                .put("ok", ok).put("masked", outcome.masked()).put("data_dir", data.toString()).put("seconds", Math.round(seconds * 10) / 10.0);
        out.println(Json.encodeToString(summary));
        return durable == rollouts ? 0 : 1;
    }
}
