package dev.rolloutfleet.ops;

import com.codahale.metrics.MetricRegistry;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.collector.Collector;
import dev.rolloutfleet.collector.CollectorConfig;
import dev.rolloutfleet.collector.CollectorListener;
import dev.rolloutfleet.common.broker.EmbeddedKafka;
import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.topics.TopicLayout;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.topics.TopicSetup;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.common.wire.TraceEvent;
import dev.rolloutfleet.worker.env.CorridorEnvironment;
import dev.rolloutfleet.worker.internal.LedgerMetadata;
import dev.rolloutfleet.worker.policy.ScriptedPolicy;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code fleet chaos worker-kill}: SIGKILLs workers while rollouts are in flight and checks that
 * nothing is lost and that only what was in flight ran again.
 *
 * <p>An embedded broker, a collector in this process and worker child JVMs. After each kill the
 * group's committed offsets are read before the dead worker's partitions move, and the run is
 * judged from the topics afterwards: a rollout was <em>in flight at a kill</em> when the killed
 * worker had started it (its {@code rollout_started} event is on the traces topic) and its
 * record was not settled by the worker's last commit (below the committed offset, or in the
 * finished set of the commit metadata). A run is <em>re-executed</em> when its trace events show
 * more than one attempt.
 */
@Command(name = "worker-kill", mixinStandardHelpOptions = true,
        description = "SIGKILL workers mid-run; exit 0 only if nothing is lost and only in-flight rollouts ran again.")
final class WorkerKillChaos implements Callable<Integer> {

    private static final String GROUP = "chaos-workers";

    @Option(names = "--rollouts", defaultValue = "2000", description = "Requests to submit (default ${DEFAULT-VALUE}).")
    int rollouts;

    @Option(names = "--kills", defaultValue = "3", description = "Workers to SIGKILL, one at a time (default ${DEFAULT-VALUE}).")
    int kills;

    @Option(names = "--work-ms", defaultValue = "2000", description = "Each rollout waits a random 0..work-ms (default ${DEFAULT-VALUE}).")
    int workMs;

    @Option(names = "--workers", defaultValue = "2", description = "Worker processes (default ${DEFAULT-VALUE}).")
    int workers;

    @Option(names = "--max-inflight", defaultValue = "64", description = "In-flight limit of each worker (default ${DEFAULT-VALUE}).")
    int maxInflight;

    @Option(names = "--partitions", defaultValue = "6", description = "Partitions per topic (default ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the kill schedule and victims (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--timeout", defaultValue = "PT15M", description = "Give up after this long, ISO-8601 (default ${DEFAULT-VALUE}).")
    Duration timeout;

    /** What was committed right after one kill, and whom it killed. */
    private record Kill(String workerId, Map<TopicPartition, OffsetAndMetadata> committed) {}

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        PrintStream log = System.err;
        Path workDir = Files.createTempDirectory("fleet-chaos-");
        Random random = new Random(seed);
        ObjectNode summary;
        try (EmbeddedKafka broker = EmbeddedKafka.start(workDir.resolve("broker"), false)) {
            KafkaConnection kafka = KafkaConnection.of(broker.bootstrapServers());
            TopicNames topics = TopicNames.defaults();
            try (Admin admin = kafka.admin()) {
                new TopicSetup(admin).ensure(TopicLayout.of(topics, partitions, (short) 1));
            }
            List<FleetChild> slots = new ArrayList<>();
            List<Kill> killed = new ArrayList<>();
            try (Collector collector = Collector.start(CollectorConfig.defaults(kafka, topics, "chaos-collector",
                    workDir.resolve("data")), new MetricRegistry(), CollectorListener.NONE)) {
                for (int i = 0; i < workers; i++) {
                    String slot = "w" + i;
                    slots.add(FleetChild.start(slot, workDir, incarnation -> List.of("worker",
                            "--bootstrap-servers", broker.bootstrapServers(), "--group-id", GROUP,
                            "--worker-id", slot + "-" + incarnation, "--max-inflight", Integer.toString(maxInflight),
                            "--metrics-port", "-1")));
                }
                Set<String> runIds = submit(kafka, topics);
                log.printf(Locale.ROOT, "submitted %d rollouts (work 0..%d ms) to %d workers; %d kills planned%n",
                        rollouts, workMs, workers, kills);
                int durable;
                long deadline = System.nanoTime() + timeout.toNanos();
                try (DurableFollower follower = new DurableFollower(kafka, topics.durable(), runIds);
                        Admin admin = kafka.admin()) {
                    long nextReport = 0;
                    while (follower.durableCount() < rollouts && System.nanoTime() < deadline) {
                        follower.poll(Duration.ofMillis(200));
                        if (killed.size() < kills && follower.durableCount() >= (long) rollouts * (killed.size() + 1) / (kills + 2)) {
                            int victim = random.nextInt(slots.size());
                            FleetChild dead = slots.get(victim);
                            dead.kill();
                            // Let a commit that was on the wire land, then read what the next owner will see.
                            Thread.sleep(500);
                            killed.add(new Kill(dead.id(), admin.listConsumerGroupOffsets(GROUP)
                                    .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS)));
                            log.printf(Locale.ROOT, "  SIGKILLed %s at %d durable; restarting it%n", dead.id(),
                                    follower.durableCount());
                            dead.restart();
                        }
                        if (System.nanoTime() >= nextReport) {
                            log.printf(Locale.ROOT, "  durable %d/%d%n", follower.durableCount(), rollouts);
                            nextReport = System.nanoTime() + Duration.ofSeconds(2).toNanos();
                        }
                    }
                    durable = follower.durableCount();
                } finally {
                    slots.forEach(FleetChild::stop);
                }
                summary = judge(kafka, topics, durable, killed);
            }
        }
        boolean held = summary.get("lost").asInt() == 0
                && summary.get("reexecuted").asInt() <= summary.get("inflight_at_kills").asInt()
                && summary.get("kills").asInt() == kills;
        if (!held) {
            log.println("the guarantees did not hold; logs are in " + workDir);
        }
        out.println(Json.encodeToString(summary));
        return held ? 0 : 1;
    }

    private Set<String> submit(KafkaConnection kafka, TopicNames topics) {
        Set<String> runIds = new LinkedHashSet<>();
        try (KafkaProducer<String, byte[]> producer = kafka.producer("chaos-submit")) {
            for (int i = 0; i < rollouts; i++) {
                ObjectNode envConfig = Json.object();
                envConfig.putObject("env_params").put("max_steps_per_episode", 1);
                RolloutRequest request = new RolloutRequest(SchemaVersion.CURRENT, "chaos-" + i, null,
                        new RolloutRequest.EnvSpec(CorridorEnvironment.NAME, (long) i, envConfig),
                        new RolloutRequest.PolicySpec(ScriptedPolicy.NAME, Json.object().put("latency_jitter_ms", workMs)),
                        null, null, null, null, null, null, null, null, null);
                runIds.add(request.runId());
                producer.send(new ProducerRecord<>(topics.requests(), request.kafkaKey(), Json.encode(request)));
            }
            producer.flush();
        }
        return runIds;
    }

    private ObjectNode judge(KafkaConnection kafka, TopicNames topics, int durable, List<Kill> killed) {
        Map<String, Set<String>> attemptsByRun = new HashMap<>();
        Map<String, List<JsonNode>> startedByWorker = new HashMap<>();
        TopicScan.scan(kafka, topics.traces(), record -> {
            TraceEvent event = Json.decode(record.value(), TraceEvent.class);
            if (TraceEvent.ROLLOUT_STARTED.equals(event.type())) {
                attemptsByRun.computeIfAbsent(event.runId(), k -> new HashSet<>()).add(event.attempt());
                startedByWorker.computeIfAbsent(event.payload().path("worker_id").asText(), k -> new ArrayList<>())
                        .add(event.payload());
            }
        });
        int inflight = 0;
        for (Kill kill : killed) {
            for (JsonNode started : startedByWorker.getOrDefault(kill.workerId(), List.of())) {
                TopicPartition tp = new TopicPartition(topics.requests(), started.path("partition").asInt());
                long offset = started.path("offset").asLong();
                OffsetAndMetadata commit = kill.committed().get(tp);
                boolean settled = commit != null && (offset < commit.offset()
                        || LedgerMetadata.decode(commit.offset(), commit.metadata()).contains(offset));
                if (!settled) {
                    inflight++;
                }
            }
        }
        long reexecuted = attemptsByRun.values().stream().filter(a -> a.size() > 1).count();
        return Json.object().put("submitted", rollouts).put("durable_run_ids", durable).put("lost", rollouts - durable)
                .put("inflight_at_kills", inflight).put("reexecuted", reexecuted).put("kills", killed.size());
    }
}
