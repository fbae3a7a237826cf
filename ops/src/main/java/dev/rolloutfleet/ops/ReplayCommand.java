package dev.rolloutfleet.ops;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.topics.DeadLetterHeaders;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.WireFormatException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code fleet replay}: re-publishes requests selected from {@code rollout.requests} (by offsets,
 * times or run ids) under new run ids, or the same ones with {@code --same-ids}; with
 * {@code --diff}, waits for the replays' results and compares each with the original's. With
 * {@code --dlq}, re-drives dead-lettered records to the topic they came from instead.
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = "Re-run selected requests (optionally comparing results with the originals), or re-drive the DLQ.")
final class ReplayCommand implements Callable<Integer> {

    @Mixin
    KafkaOptions kafka;

    @Option(names = "--from-offset", split = ",", paramLabel = "[P:]OFFSET",
            description = "First offset to take, inclusive: PARTITION:OFFSET, or OFFSET for every partition (repeatable).")
    List<String> fromOffsets = new ArrayList<>();

    @Option(names = "--to-offset", split = ",", paramLabel = "[P:]OFFSET",
            description = "Offset to stop at, exclusive: PARTITION:OFFSET, or OFFSET for every partition (default: the end).")
    List<String> toOffsets = new ArrayList<>();

    @Option(names = "--from-time", paramLabel = "INSTANT", description = "Take records published at or after this ISO-8601 instant.")
    Instant fromTime;

    @Option(names = "--to-time", paramLabel = "INSTANT", description = "Take records published before this ISO-8601 instant.")
    Instant toTime;

    @Option(names = "--run-ids", split = ",", paramLabel = "RUN_ID", description = "Take only these runs (comma-separated).")
    Set<String> runIds;

    @Option(names = "--same-ids", description = "Keep the original run ids (the collector then keeps only the first durable record of each).")
    boolean sameIds;

    @Option(names = "--to-topic", paramLabel = "TOPIC", description = "Publish to this topic instead of the requests topic.")
    String toTopic;

    @Option(names = "--diff", description = "Wait for the replays' results and compare each with the original's.")
    boolean diff;

    @Option(names = "--dlq", description = "Re-drive records from the DLQ to the topic they came from (after a fix).")
    boolean dlq;

    @Option(names = "--error-code", paramLabel = "CODE", description = "With --dlq: only records refused with this error code.")
    String errorCode;

    @Option(names = "--dry-run", description = "Select and report, publish nothing.")
    boolean dryRun;

    @Option(names = "--timeout", defaultValue = "PT10M", description = "With --diff: give up waiting after this long (default ${DEFAULT-VALUE}).")
    Duration timeout;

    /** A selected request and where it was read. */
    private record Selected(RolloutRequest request, int partition, long offset) {}

    @Override
    public Integer call() throws Exception {
        if (dlq && (diff || sameIds || runIds != null)) {
            throw new IllegalArgumentException("--dlq re-drives records as they are; it cannot be combined with --diff, --same-ids or --run-ids");
        }
        if (diff && toTopic != null) {
            throw new IllegalArgumentException("--diff needs the replays to run on this fleet; drop --to-topic");
        }
        return dlq ? redriveDeadLetters() : replay();
    }

    private int replay() throws Exception {
        PrintStream out = System.out;
        PrintStream log = System.err;
        String source = kafka.topics().requests();
        List<Selected> selected = new ArrayList<>();
        int unreadable = 0;
        try (KafkaConsumer<String, byte[]> consumer = kafka.connection().consumer(null, "fleet-replay")) {
            TopicSlice slice = TopicSlice.resolve(consumer, source, fromOffsets, toOffsets, fromTime, toTime);
            List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
            slice.read(consumer, records::add);
            for (ConsumerRecord<String, byte[]> record : records) {
                try {
                    RolloutRequest request = Json.decode(record.value(), RolloutRequest.class);
                    if (runIds == null || runIds.contains(request.runId())) {
                        selected.add(new Selected(request, record.partition(), record.offset()));
                    }
                } catch (WireFormatException e) {
                    unreadable++; // already in the DLQ, where --dlq re-drives it
                }
            }
        }
        String batch = Long.toString(System.currentTimeMillis(), 36);
        Map<String, RolloutRequest> replays = new LinkedHashMap<>(); // original run id -> replay
        for (Selected s : selected) {
            replays.putIfAbsent(s.request().runId(),
                    RequestReplays.replay(s.request(), batch, sameIds, source + ":" + s.partition() + ":" + s.offset()));
        }
        if (runIds != null && replays.size() < runIds.size()) {
            log.printf(Locale.ROOT, "not found on %s: %s%n", source,
                    runIds.stream().filter(id -> !replays.containsKey(id)).sorted().toList());
        }
        ObjectNode summary = Json.object().put("selected", replays.size()).put("unreadable_skipped", unreadable).put("batch", batch);
        if (dryRun || replays.isEmpty()) {
            replays.forEach((original, replay) -> out.println(original + " -> " + replay.runId()));
            summary.put("published", 0);
            out.println(Json.encodeToString(summary));
            return replays.isEmpty() && !dryRun ? 1 : 0;
        }
        ResultsSince results = diff ? new ResultsSince(kafka.connection(), kafka.topics().results()) : null;
        String target = toTopic != null ? toTopic : source;
        RecordPublisher.publishAll(kafka.connection(), "fleet-replay", RecordPublisher.requests(target, List.copyOf(replays.values())));
        log.printf(Locale.ROOT, "published %d replays (batch %s) to %s%n", replays.size(), batch, target);
        summary.put("published", replays.size());
        if (!diff) {
            out.println(Json.encodeToString(summary));
            return 0;
        }
        try (results) {
            return compare(replays, results, summary, out, log);
        }
    }

    private int compare(Map<String, RolloutRequest> replays, ResultsSince results, ObjectNode summary, PrintStream out,
            PrintStream log) {
        Map<String, RolloutResult> originals = results.before(replays.keySet());
        Map<String, String> awaited = new HashMap<>(); // replay run id -> original run id
        replays.forEach((original, replay) -> awaited.put(replay.runId(), original));
        Map<String, RolloutResult> replayed = results.awaitAfter(awaited.keySet(), timeout, log);
        int identical = 0;
        int differing = 0;
        int missing = 0;
        for (Map.Entry<String, RolloutRequest> e : replays.entrySet()) {
            String originalId = e.getKey();
            String replayId = e.getValue().runId();
            RolloutResult original = originals.get(originalId);
            RolloutResult replay = replayed.get(replayId);
            if (original == null || replay == null) {
                missing++;
                out.printf(Locale.ROOT, "MISSING %s -> %s: no %s result on %s%n", originalId, replayId,
                        original == null ? "original" : "replay", kafka.topics().results());
                continue;
            }
            List<String> differences = ResultDiff.differences(original, replay);
            if (differences.isEmpty()) {
                identical++;
            } else {
                differing++;
                out.printf(Locale.ROOT, "DIFF %s -> %s%n", originalId, replayId);
                differences.forEach(d -> out.println("  " + d));
            }
        }
        out.printf(Locale.ROOT, "compared %d replays: %d identical, %d different, %d missing%n",
                identical + differing, identical, differing, missing);
        summary.put("compared", identical + differing).put("identical", identical).put("differences", differing).put("missing", missing);
        out.println(Json.encodeToString(summary));
        return differing == 0 && missing == 0 ? 0 : 1;
    }

    private int redriveDeadLetters() throws Exception {
        PrintStream out = System.out;
        String dlqTopic = kafka.topics().requestsDlq();
        List<ProducerRecord<String, byte[]>> redrives = new ArrayList<>();
        Map<String, Integer> byCode = new TreeMap<>();
        try (KafkaConsumer<String, byte[]> consumer = kafka.connection().consumer(null, "fleet-replay-dlq")) {
            TopicSlice.resolve(consumer, dlqTopic, fromOffsets, toOffsets, fromTime, toTime).read(consumer, record -> {
                String code = header(record, DeadLetterHeaders.ERROR_CODE, "unknown");
                if (errorCode != null && !errorCode.equals(code)) {
                    return;
                }
                String target = toTopic != null ? toTopic : header(record, DeadLetterHeaders.SOURCE_TOPIC, kafka.topics().requests());
                // A keyless dead letter cannot take the fleet's partitioner; it goes to partition 0 of its topic.
                ProducerRecord<String, byte[]> redrive = new ProducerRecord<>(target, record.key() == null ? Integer.valueOf(0) : null,
                        record.key(), record.value());
                redrive.headers().add(DeadLetterHeaders.REDRIVEN_FROM,
                        (record.partition() + ":" + record.offset()).getBytes(StandardCharsets.UTF_8));
                redrives.add(redrive);
                byCode.merge(code, 1, Integer::sum);
            });
        }
        byCode.forEach((code, n) -> out.printf(Locale.ROOT, "  %-24s %d%n", code, n));
        if (!dryRun) {
            RecordPublisher.publishAll(kafka.connection(), "fleet-replay", redrives);
        }
        ObjectNode summary = Json.object().put("redriven", dryRun ? 0 : redrives.size()).put("selected", redrives.size());
        summary.set("error_codes", Json.tree(byCode));
        out.println(Json.encodeToString(summary));
        return 0;
    }

    private static String header(ConsumerRecord<?, ?> record, String name, String fallback) {
        Header header = record.headers().lastHeader(name);
        return header == null ? fallback : new String(header.value(), StandardCharsets.UTF_8);
    }
}
