package dev.rolloutfleet.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import dev.rolloutfleet.common.testing.KafkaCluster;
import dev.rolloutfleet.common.testing.RealKafka;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.wire.AbortCommand;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.worker.env.Environments;
import dev.rolloutfleet.worker.env.ToolCall;
import dev.rolloutfleet.worker.policy.Decision;
import dev.rolloutfleet.worker.policy.Policies;
import dev.rolloutfleet.worker.policy.PolicyException;
import dev.rolloutfleet.worker.policy.PolicyFactory;
import dev.rolloutfleet.worker.policy.ScriptedPolicy;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealKafka.class)
class WorkerEngineTest {

    /** A corridor rollout whose policy waits {@code latencyMs} (+ up to {@code jitterMs}) per decision. */
    static RolloutRequest request(String runId, int maxSteps, long latencyMs, long jitterMs, Double maxTimeS) {
        ObjectNode envConfig = Json.object();
        envConfig.putObject("env_params").put("max_steps_per_episode", maxSteps);
        ObjectNode policyConfig = Json.object().put("latency_ms", latencyMs).put("latency_jitter_ms", jitterMs);
        return new RolloutRequest(SchemaVersion.CURRENT, runId, null,
                new RolloutRequest.EnvSpec("corridor", 1_000_000L, envConfig),
                new RolloutRequest.PolicySpec(ScriptedPolicy.NAME, policyConfig),
                null, null, RolloutRequest.ON_DONE_RESET,
                maxTimeS == null ? null : new RolloutRequest.SafetySpec(null, maxTimeS),
                null, null, null, null, null);
    }

    @Test
    void twoThousandRequestsWithASecondWorkerJoiningMidRunEachGetExactlyOneResult(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(6);
        String group = KafkaCluster.uniqueName("workers");
        MetricRegistry first = new MetricRegistry();
        MetricRegistry second = new MetricRegistry();
        Set<String> runIds = new HashSet<>();
        Random random = new Random(42);
        for (int i = 0; i < 2000; i++) {
            runIds.add("join-" + i);
        }
        try (Worker w1 = Worker.start(config(kafka, topics, group, "w1").maxInflight(500).build(), first)) {
            Thread publisher = Thread.ofVirtual().start(() -> {
                try (KafkaProducer<String, byte[]> producer = kafka.connection().producer("paced-submit")) {
                    for (int i = 0; i < 2000; i++) {
                        RolloutRequest r = request("join-" + i, 1, 0, random.nextInt(201), null);
                        producer.send(new ProducerRecord<>(topics.requests(), r.kafkaKey(), Json.encode(r)));
                        if (i % 50 == 49) {
                            Thread.sleep(100);
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            await().atMost(Duration.ofSeconds(60)).until(() -> first.meter("worker.rollouts.ok").getCount() >= 400);
            try (Worker w2 = Worker.start(config(kafka, topics, group, "w2").maxInflight(500).build(), second)) {
                publisher.join();
                List<RolloutResult> results = readResults(kafka, topics, 2000);
                assertThat(results).extracting(RolloutResult::runId).doesNotHaveDuplicates()
                        .containsExactlyInAnyOrderElementsOf(runIds);
                assertThat(results).extracting(r -> r.worker().id()).contains("w1", "w2");
            }
        }
        assertThat(first.meter("worker.rollouts.started").getCount() + second.meter("worker.rollouts.started").getCount())
                .as("no request ran twice").isEqualTo(2000);
        assertThat(first.meter("worker.rollouts.cancelled").getCount() + second.meter("worker.rollouts.cancelled").getCount())
                .isZero();
    }

    @Test
    void aNewOwnerSkipsOffsetsTheOldOwnerFinishedAboveItsCommittedOffset(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        String group = KafkaCluster.uniqueName("workers");
        submit(kafka, topics, request("slow", 1, 60_000, 0, null));
        for (int i = 0; i < 20; i++) {
            submit(kafka, topics, request("fast-" + i, 1, 0, 0, null));
        }
        MetricRegistry firstMetrics = new MetricRegistry();
        Worker w1 = Worker.start(config(kafka, topics, group, "w1").revokeGrace(Duration.ZERO).build(), firstMetrics);
        await().atMost(Duration.ofSeconds(60)).until(() -> firstMetrics.meter("worker.rollouts.ok").getCount() == 20);
        // Leaves with the slow rollout still running: it is cancelled, its result never published.
        w1.close();
        assertThat(firstMetrics.meter("worker.rollouts.cancelled").getCount()).isEqualTo(1);

        MetricRegistry secondMetrics = new MetricRegistry();
        // The slow request now runs fast: the new owner's run is what finishes it.
        try (Worker ignored = Worker.start(config(kafka, topics, group, "w2").build(), secondMetrics,
                Environments.builtIn(), new Policies(List.of(new InstantPolicy())))) {
            List<RolloutResult> results = readResults(kafka, topics, 21);
            assertThat(results).extracting(RolloutResult::runId).doesNotHaveDuplicates().contains("slow");
            assertThat(results).filteredOn(r -> r.runId().equals("slow")).singleElement()
                    .satisfies(r -> assertThat(r.worker().id()).isEqualTo("w2"));
            assertThat(secondMetrics.meter("worker.ledger.skipped_finished").getCount()).isEqualTo(20);
            assertThat(secondMetrics.meter("worker.rollouts.started").getCount()).isEqualTo(1);
        }
    }

    @Test
    void whenTheMetadataWindowIsFullThePartitionPausesInsteadOfDroppingTheMap(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        // 64 characters of metadata describe (64 - 10) * 6 = 324 offsets above the committed one.
        submit(kafka, topics, request("blocker", 1, 4_000, 0, null));
        List<RolloutRequest> fast = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            fast.add(request("fast-" + i, 1, 0, 0, null));
        }
        submit(kafka, topics, fast.toArray(RolloutRequest[]::new));
        MetricRegistry metrics = new MetricRegistry();
        try (Worker ignored = Worker.start(config(kafka, topics, KafkaCluster.uniqueName("g"), "w1")
                .maxCommitMetadataChars(64).maxInflight(1000).build(), metrics)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> metrics.meter("worker.rollouts.ok").getCount() == 324
                    && gauge(metrics, "worker.partitions.paused") == 1);
            await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(3))
                    .until(() -> metrics.meter("worker.rollouts.ok").getCount() == 324);
            // Once the blocker finishes, the window slides and everything else runs.
            List<RolloutResult> results = readResults(kafka, topics, 401);
            assertThat(results).extracting(RolloutResult::runId).doesNotHaveDuplicates();
        }
    }

    @Test
    void anAbortEndsARunningRolloutAtItsNextOpWithTheTrajectorySoFar(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        MetricRegistry metrics = new MetricRegistry();
        try (Worker worker = Worker.start(config(kafka, topics, KafkaCluster.uniqueName("g"), "w1").build(), metrics)) {
            await().atMost(Duration.ofSeconds(30)).until(worker::isReady);
            submit(kafka, topics, request("to-abort", 50, 200, 0, null));
            // Abort once the rollout has taken a step, so there is a trajectory so far.
            TopicReader.readUntil(kafka.connection(), topics.traces(), records -> records.stream()
                    .anyMatch(r -> Json.decode(r.value(), dev.rolloutfleet.common.wire.TraceEvent.class).type()
                            .equals(dev.rolloutfleet.common.wire.TraceEvent.ENV_STEP)), Duration.ofSeconds(30));
            abort(kafka, topics, "to-abort");
            RolloutResult result = readResults(kafka, topics, 1).get(0);
            assertThat(result.status()).isEqualTo(RolloutStatus.ABORTED);
            assertThat(result.aborted()).isTrue();
            assertThat(result.error().message()).isEqualTo("operator says stop");
            assertThat(result.metrics().numSteps()).isBetween(1, 49);
            assertThat(result.trajectories().get(0).steps()).hasSize(result.metrics().numSteps());
        }
    }

    @Test
    void anAbortForARequestNotYetStartedFinishesItAtOnceAsAborted(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        MetricRegistry metrics = new MetricRegistry();
        try (Worker worker = Worker.start(config(kafka, topics, KafkaCluster.uniqueName("g"), "w1").maxInflight(1).build(),
                metrics)) {
            await().atMost(Duration.ofSeconds(30)).until(worker::isReady);
            submit(kafka, topics, request("occupies-the-slot", 1, 2_000, 0, null), request("waits", 5, 0, 0, null));
            await().atMost(Duration.ofSeconds(30)).until(() -> metrics.meter("worker.rollouts.started").getCount() == 1);
            abort(kafka, topics, "waits");
            Map<String, RolloutResult> results = readResults(kafka, topics, 2).stream()
                    .collect(Collectors.toMap(RolloutResult::runId, r -> r));
            assertThat(results.get("occupies-the-slot").status()).isEqualTo(RolloutStatus.OK);
            RolloutResult waited = results.get("waits");
            assertThat(waited.status()).isEqualTo(RolloutStatus.ABORTED);
            assertThat(waited.aborted()).isTrue();
            assertThat(waited.metrics().numSteps()).isZero();
            assertThat(waited.opsExecuted()).isZero();
        }
    }

    @Test
    void aRolloutStuckInABlockingHttpCallIsInterruptedAtItsDeadline(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        CountDownLatch release = new CountDownLatch(1);
        HttpServer stalling = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        stalling.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        stalling.createContext("/", exchange -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            exchange.close();
        });
        stalling.start();
        try (Worker ignored = Worker.start(config(kafka, topics, KafkaCluster.uniqueName("g"), "w1").build(),
                new MetricRegistry(), Environments.builtIn(),
                new Policies(List.of(new StallsOnThirdDecision(stalling.getAddress().getPort()))))) {
            RolloutRequest stuck = request("stuck", 20, 0, 0, 1.5);
            submit(kafka, topics, new RolloutRequest(stuck.schemaVersion(), stuck.runId(), null, stuck.env(),
                    new RolloutRequest.PolicySpec("stalls", Json.object()), null, null, null, stuck.safety(), null, null,
                    null, null, null));
            long start = System.nanoTime();
            RolloutResult result = readResults(kafka, topics, 1).get(0);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
            assertThat(result.status()).isEqualTo(RolloutStatus.FAILED);
            assertThat(result.error().code()).isEqualTo("deadline_exceeded");
            assertThat(result.trajectories().get(0).steps()).as("the trajectory so far").hasSize(2);
        } finally {
            release.countDown();
            stalling.stop(0);
        }
    }

    @Test
    void aResultTheBrokerRefusesForGoodIsReplacedByAVisibleFailure(KafkaCluster kafka) throws Exception {
        TopicNames topics = kafka.freshTopics(1);
        // A producer that refuses records over 3000 bytes: a 40-step result is larger, its trace events are not.
        dev.rolloutfleet.common.kafka.KafkaConnection small = new dev.rolloutfleet.common.kafka.KafkaConnection(
                kafka.bootstrapServers(), Map.of("max.request.size", "3000"));
        MetricRegistry metrics = new MetricRegistry();
        try (Worker ignored = Worker.start(WorkerConfig.builder(small, topics, "w1").groupId(KafkaCluster.uniqueName("g"))
                .build(), metrics)) {
            ObjectNode envConfig = Json.object();
            envConfig.putObject("env_params").put("max_steps_per_episode", 40);
            submit(kafka, topics, new RolloutRequest(SchemaVersion.CURRENT, "too-big", null,
                    new RolloutRequest.EnvSpec("corridor", 1L, envConfig),
                    new RolloutRequest.PolicySpec(ScriptedPolicy.NAME, Json.object().put("epsilon", 1.0)), null, null,
                    RolloutRequest.ON_DONE_RESET, null, null, null, null, null, null));
            RolloutResult result = readResults(kafka, topics, 1).get(0);
            assertThat(result.status()).isEqualTo(RolloutStatus.FAILED);
            assertThat(result.error().code()).isEqualTo("output_rejected");
            assertThat(result.metrics().numSteps()).isEqualTo(40);
            assertThat(metrics.meter("worker.outputs.send_failed").getCount()).isPositive();
        }
    }

    /** Decides instantly; the slow request of the skip test finishes fast on its new owner. */
    static final class InstantPolicy implements PolicyFactory {
        @Override
        public String name() {
            return ScriptedPolicy.NAME;
        }

        @Override
        public dev.rolloutfleet.worker.policy.Policy create(RolloutRequest.PolicySpec spec,
                dev.rolloutfleet.worker.policy.PolicyContext context) {
            return (observation, index) -> new Decision(List.of(new ToolCall("move", Json.object().put("direction", "right"))),
                    Json.object());
        }
    }

    /** Answers two decisions, then blocks in an HTTP call to a server that never answers. */
    static final class StallsOnThirdDecision implements PolicyFactory {
        private final int port;

        StallsOnThirdDecision(int port) {
            this.port = port;
        }

        @Override
        public String name() {
            return "stalls";
        }

        @Override
        public dev.rolloutfleet.worker.policy.Policy create(RolloutRequest.PolicySpec spec,
                dev.rolloutfleet.worker.policy.PolicyContext context) {
            HttpClient http = HttpClient.newHttpClient();
            return (observation, index) -> {
                if (index >= 2) {
                    try {
                        http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions")).build(),
                                HttpResponse.BodyHandlers.discarding());
                    } catch (IOException e) {
                        throw new PolicyException("inference call failed: " + e.getMessage(), e);
                    }
                }
                return new Decision(List.of(new ToolCall("move", Json.object().put("direction", "right"))), Json.object());
            };
        }
    }

    private static WorkerConfig.Builder config(KafkaCluster kafka, TopicNames topics, String group, String id) {
        return WorkerConfig.builder(kafka.connection(), topics, id).groupId(group);
    }

    private static void submit(KafkaCluster kafka, TopicNames topics, RolloutRequest... requests) throws Exception {
        try (KafkaProducer<String, byte[]> producer = kafka.connection().producer("test-submit")) {
            for (RolloutRequest r : requests) {
                producer.send(new ProducerRecord<>(topics.requests(), r.kafkaKey(), Json.encode(r)));
            }
            producer.flush();
        }
    }

    private static void abort(KafkaCluster kafka, TopicNames topics, String runId) throws Exception {
        try (KafkaProducer<String, byte[]> producer = kafka.connection().producer("test-abort")) {
            producer.send(new ProducerRecord<>(topics.control(), runId,
                    Json.encode(new AbortCommand(runId, "operator says stop", System.currentTimeMillis())))).get();
        }
    }

    private static List<RolloutResult> readResults(KafkaCluster kafka, TopicNames topics, int count) {
        List<ConsumerRecord<String, byte[]>> records = TopicReader.readUntil(kafka.connection(), topics.results(),
                r -> r.size() >= count, Duration.ofSeconds(120));
        return records.stream().map(r -> Json.decode(r.value(), RolloutResult.class)).toList();
    }

    private static long gauge(MetricRegistry metrics, String name) {
        Gauge<?> gauge = metrics.getGauges().get(name);
        return ((Number) gauge.getValue()).longValue();
    }
}
