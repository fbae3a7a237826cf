package dev.rolloutfleet.ops;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.DurablePointer;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RequestValidator;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.common.wire.WireFormatException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code fleet submit}: publishes requests from a JSONL file or generated ones, then (unless
 * {@code --no-wait}) follows {@code rollout.durable} until every one is durable, with progress, a
 * summary table, and as the last line a JSON object with the same numbers.
 */
@Command(name = "submit", mixinStandardHelpOptions = true,
        description = "Publish rollout requests (--file JSONL, or generated) and wait until they are durable.")
final class SubmitCommand implements Callable<Integer> {

    @Mixin
    KafkaOptions kafka;

    @Option(names = "--file", description = "JSONL file of RolloutRequests, one per line.")
    Path file;

    @Option(names = "--env", defaultValue = "crafter-lite", description = "Generated requests: env_name (default ${DEFAULT-VALUE}).")
    String env;

    @Option(names = "--policy", defaultValue = "scripted", description = "Generated requests: policy_name (default ${DEFAULT-VALUE}).")
    String policy;

    @Option(names = "--inference-url", description = "Generated requests: policy.config.inference_url (openai policy).")
    String inferenceUrl;

    @Option(names = "--model", defaultValue = "default", description = "Generated requests: policy.config.model (default ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--rollouts", defaultValue = "100", description = "Generated requests: how many (default ${DEFAULT-VALUE}).")
    int rollouts;

    @Option(names = "--max-steps", defaultValue = "10", description = "Generated requests: max_steps_per_episode (default ${DEFAULT-VALUE}).")
    int maxSteps;

    @Option(names = "--capture", description = "Generated requests: turn token capture on.")
    boolean capture;

    @Option(names = "--no-wait", description = "Publish and exit without waiting.")
    boolean noWait;

    @Option(names = "--timeout", defaultValue = "PT30M", description = "Give up waiting after this long, ISO-8601 (default ${DEFAULT-VALUE}).")
    Duration timeout;

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        PrintStream log = System.err;
        List<RolloutRequest> requests = file != null ? readFile() : generate();
        Map<TopicPartition, Long> resultsFrom = resultsEnd();
        Set<String> runIds = new LinkedHashSet<>();
        requests.forEach(r -> runIds.add(r.runId()));
        RecordPublisher.publishAll(kafka.connection(), "fleet-submit", RecordPublisher.requests(kafka.topics().requests(), requests));
        log.printf(Locale.ROOT, "submitted %d requests to %s%n", runIds.size(), kafka.topics().requests());
        if (noWait) {
            out.println(Json.encodeToString(Json.object().put("submitted", runIds.size())));
            return 0;
        }
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        int durable;
        Map<String, DurablePointer> pointers;
        try (DurableFollower follower = new DurableFollower(kafka.connection(), kafka.topics().durable(), runIds)) {
            long nextReport = 0;
            while (follower.durableCount() < runIds.size() && System.nanoTime() < deadline) {
                follower.poll(Duration.ofMillis(200));
                if (System.nanoTime() >= nextReport) {
                    double seconds = Math.max(0.001, (System.nanoTime() - start) / 1e9);
                    int done = follower.durableCount();
                    double rate = done / seconds;
                    Map<RolloutStatus, Integer> counts = follower.statusCounts();
                    log.printf(Locale.ROOT, "  %s durable %d/%d  %.1f/s  ETA %s  ok %d failed %d masked %d%n",
                            ProgressBar.of(done, runIds.size()), done, runIds.size(), rate,
                            rate > 0 ? Math.round((runIds.size() - done) / rate) + " s" : "?", counts.getOrDefault(RolloutStatus.OK, 0),
                            counts.getOrDefault(RolloutStatus.FAILED, 0), follower.maskedCount());
                    nextReport = System.nanoTime() + Duration.ofSeconds(1).toNanos();
                }
            }
            durable = follower.durableCount();
            pointers = follower.pointers();
        }
        ObjectNode summary = summarize(runIds, durable, pointers, resultsFrom);
        printTable(out, summary);
        out.println(Json.encodeToString(summary));
        return durable == runIds.size() ? 0 : 1;
    }

    private List<RolloutRequest> readFile() throws Exception {
        List<RolloutRequest> requests = new ArrayList<>();
        int number = 0;
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            number++;
            if (line.isBlank()) {
                continue;
            }
            try {
                requests.add(RequestValidator.check(Json.decode(line, RolloutRequest.class)));
            } catch (WireFormatException | dev.rolloutfleet.common.wire.InvalidRequestException e) {
                throw new IllegalArgumentException(file + " line " + number + ": " + e.getMessage());
            }
        }
        return requests;
    }

    private List<RolloutRequest> generate() {
        String batch = Long.toString(System.currentTimeMillis(), 36);
        List<RolloutRequest> requests = new ArrayList<>();
        for (int i = 0; i < rollouts; i++) {
            ObjectNode envConfig = Json.object();
            envConfig.putObject("env_params").put("max_steps_per_episode", maxSteps);
            ObjectNode policyConfig = Json.object().put("model", model);
            if (inferenceUrl != null) {
                policyConfig.put("inference_url", inferenceUrl);
            }
            if (capture) {
                policyConfig.putObject("token_id_capture").put("enabled", true).put("all_agents", true);
            }
            requests.add(new RolloutRequest(SchemaVersion.CURRENT, "submit-" + batch + "-" + i, null,
                    new RolloutRequest.EnvSpec(env, (long) i, envConfig), new RolloutRequest.PolicySpec(policy, policyConfig),
                    null, null, RolloutRequest.ON_DONE_TERMINATE, null, "rl", null, null, null, null));
        }
        return requests;
    }

    private Map<TopicPartition, Long> resultsEnd() {
        try (KafkaConsumer<String, byte[]> consumer = kafka.connection().consumer(null, "fleet-submit-results")) {
            String topic = kafka.topics().results();
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            return consumer.endOffsets(partitions);
        }
    }

    /** Status counts from the pointers; durations and queue delays from the results published since submission. */
    private ObjectNode summarize(Set<String> runIds, int durable, Map<String, DurablePointer> pointers,
            Map<TopicPartition, Long> resultsFrom) {
        Map<String, Integer> statuses = new TreeMap<>();
        Map<String, Integer> maskReasons = new TreeMap<>();
        for (DurablePointer p : pointers.values()) {
            statuses.merge(p.status() == null ? "unknown" : p.status().name().toLowerCase(Locale.ROOT), 1, Integer::sum);
            if (p.masked()) {
                maskReasons.merge(p.maskReason(), 1, Integer::sum);
            }
        }
        List<Long> durations = new ArrayList<>();
        List<Long> delays = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = kafka.connection().consumer(null, "fleet-submit-results")) {
            consumer.assign(resultsFrom.keySet());
            resultsFrom.forEach(consumer::seek);
            Map<TopicPartition, Long> ends = consumer.endOffsets(resultsFrom.keySet());
            while (ends.entrySet().stream().anyMatch(e -> consumer.position(e.getKey()) < e.getValue())) {
                for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    if (!runIds.contains(record.key())) {
                        continue;
                    }
                    try {
                        RolloutResult result = Json.decode(record.value(), RolloutResult.class);
                        if (result.timing() != null) {
                            durations.add(result.timing().path("duration_ms").asLong());
                            delays.add(result.timing().path("queue_delay_ms").asLong());
                        }
                    } catch (WireFormatException e) {
                        // Unreadable results are the collector's to report.
                    }
                }
            }
        }
        ObjectNode summary = Json.object().put("submitted", runIds.size()).put("durable", durable);
        summary.set("statuses", Json.tree(statuses));
        summary.put("masked", maskReasons.values().stream().mapToInt(Integer::intValue).sum());
        summary.set("mask_reasons", Json.tree(maskReasons));
        summary.set("duration_ms", percentiles(durations));
        summary.set("queue_delay_ms", percentiles(delays));
        return summary;
    }

    private static ObjectNode percentiles(List<Long> values) {
        ObjectNode node = Json.object();
        if (values.isEmpty()) {
            return node;
        }
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        for (double q : new double[] {0.5, 0.95, 0.99}) {
            int index = (int) Math.min(sorted.size() - 1, Math.ceil(q * sorted.size()) - 1);
            node.put("p" + Math.round(q * 100), sorted.get(Math.max(0, index)));
        }
        return node;
    }

    private static void printTable(PrintStream out, ObjectNode summary) {
        out.printf(Locale.ROOT, "%-16s %s%n", "submitted", summary.get("submitted"));
        out.printf(Locale.ROOT, "%-16s %s%n", "durable", summary.get("durable"));
        summary.get("statuses").fields().forEachRemaining(e -> out.printf(Locale.ROOT, "  %-14s %s%n", e.getKey(), e.getValue()));
        out.printf(Locale.ROOT, "%-16s %s %s%n", "masked", summary.get("masked"), summary.get("mask_reasons"));
        out.printf(Locale.ROOT, "%-16s %s%n", "duration ms", summary.get("duration_ms"));
        out.printf(Locale.ROOT, "%-16s %s%n", "queue delay ms", summary.get("queue_delay_ms"));
    }
}
