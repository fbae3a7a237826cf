package dev.rolloutfleet.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.DurablePointer;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.TraceEvent;
import dev.rolloutfleet.common.wire.WireFormatException;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code fleet status RUN_ID}: where one rollout is. Queued (its request is on the topic), running
 * (a worker started an attempt and has not finished it), finished (a result), durable (a
 * collector's pointer: file and byte offset), and its capture state per attempt from the
 * collectors' admin endpoint. The last line is the same as JSON.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Say where one rollout is: queued, running, finished, durable; and its capture state.")
final class StatusCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "RUN_ID", description = "The rollout's run_id.")
    String runId;

    @Mixin
    KafkaOptions kafka;

    @Option(names = "--collector-url", split = ",", paramLabel = "URL",
            description = "Collector metrics/admin endpoints to ask for the capture state, e.g. http://collector-0:9400 (repeatable).")
    List<String> collectorUrls = new ArrayList<>();

    @Override
    public Integer call() {
        PrintStream out = System.out;
        ObjectNode status = Json.object().put("run_id", runId);
        ConsumerRecord<String, byte[]> request = findRequest();
        if (request != null) {
            status.set("request", Json.object().put("partition", request.partition()).put("offset", request.offset())
                    .put("published_at", Instant.ofEpochMilli(request.timestamp()).toString()));
        }
        Map<String, ObjectNode> attempts = attempts();
        if (!attempts.isEmpty()) {
            status.set("attempts", Json.tree(attempts));
        }
        DurablePointer durable = durable();
        if (durable != null) {
            status.set("durable", Json.object().put("attempt", durable.attempt()).put("file", durable.file())
                    .put("byte_offset", durable.byteOffset()).put("collector", durable.collector())
                    .put("masked", durable.masked()).put("mask_reason", durable.maskReason()));
        }
        JsonNode capture = captureState();
        if (capture != null) {
            status.set("capture", capture);
        }
        String state = state(request, attempts, durable);
        status.put("state", state);
        print(out, status);
        out.println(Json.encodeToString(status));
        return state.equals("unknown") ? 1 : 0;
    }

    private static String state(ConsumerRecord<?, ?> request, Map<String, ObjectNode> attempts, DurablePointer durable) {
        if (durable != null) {
            return "durable";
        }
        if (attempts.values().stream().anyMatch(a -> a.has("result_status"))) {
            return "finished";
        }
        if (attempts.values().stream().anyMatch(a -> a.has("started_at") && !a.has("finished_at") && !a.has("abandoned"))) {
            return "running";
        }
        return request != null ? "queued" : "unknown";
    }

    /** The run's request: on its own partition when keyed by run id, else (a GRPO group's key) anywhere. */
    private ConsumerRecord<String, byte[]> findRequest() {
        String topic = kafka.topics().requests();
        List<ConsumerRecord<String, byte[]>> found = RunRecords.read(kafka.connection(), topic, runId);
        if (!found.isEmpty()) {
            return found.get(0);
        }
        System.err.println("no request keyed " + runId + " on its partition of " + topic
                + "; reading the whole topic (requests of a GRPO group are keyed by group_id)");
        List<ConsumerRecord<String, byte[]>> inGroups = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = kafka.connection().consumer(null, "fleet-status")) {
            TopicSlice.whole(consumer, topic).read(consumer, record -> {
                if (inGroups.isEmpty() && record.value() != null && runId.equals(runIdOf(record.value()))) {
                    inGroups.add(record);
                }
            });
        }
        return inGroups.isEmpty() ? null : inGroups.get(0);
    }

    private static String runIdOf(byte[] value) {
        try {
            return Json.decode(value, RolloutRequest.class).runId();
        } catch (WireFormatException e) {
            return null;
        }
    }

    /** Per attempt: which worker started it and when, when it finished, and its result. */
    private Map<String, ObjectNode> attempts() {
        Map<String, ObjectNode> attempts = new LinkedHashMap<>();
        List<TraceEvent> events = new ArrayList<>();
        RunRecords.read(kafka.connection(), kafka.topics().traces(), runId).forEach(r -> events.add(Json.decode(r.value(), TraceEvent.class)));
        events.sort(Comparator.comparingLong(TraceEvent::ts));
        for (TraceEvent e : events) {
            ObjectNode attempt = attempts.computeIfAbsent(e.attempt(), k -> Json.object());
            JsonNode p = e.payload() == null ? Json.object() : e.payload();
            if (TraceEvent.ROLLOUT_STARTED.equals(e.type())) {
                attempt.put("worker", p.path("worker_id").asText(null)).put("partition", p.path("partition").asInt())
                        .put("offset", p.path("offset").asLong()).put("started_at", Instant.ofEpochMilli(e.ts()).toString());
            } else if (TraceEvent.ROLLOUT_FINISHED.equals(e.type())) {
                attempt.put("finished_at", Instant.ofEpochMilli(e.ts()).toString());
            }
        }
        // An unfinished attempt followed by another was left by a worker that stopped (its
        // partition's next owner ran the request again); only the last can still be running.
        List<ObjectNode> started = attempts.values().stream().filter(a -> a.has("started_at")).toList();
        for (int i = 0; i < started.size() - 1; i++) {
            if (!started.get(i).has("finished_at")) {
                started.get(i).put("abandoned", true);
            }
        }
        for (ConsumerRecord<String, byte[]> record : RunRecords.read(kafka.connection(), kafka.topics().results(), runId)) {
            try {
                RolloutResult result = Json.decode(record.value(), RolloutResult.class);
                ObjectNode attempt = attempts.computeIfAbsent(result.attempt(), k -> Json.object());
                attempt.put("result_status", result.status() == null ? null : result.status().name().toLowerCase(Locale.ROOT));
                if (result.error() != null) {
                    attempt.put("error_code", result.error().code());
                }
                attempt.put("result_offset", record.offset());
            } catch (WireFormatException e) {
                // An unreadable result is the collector's to report.
            }
        }
        return attempts;
    }

    private DurablePointer durable() {
        for (ConsumerRecord<String, byte[]> record : RunRecords.read(kafka.connection(), kafka.topics().durable(), runId)) {
            try {
                return Json.decode(record.value(), DurablePointer.class);
            } catch (WireFormatException e) {
                // keep looking
            }
        }
        return null;
    }

    /** The first collector that owns the run's partition answers; null when none was asked or none owns it. */
    private JsonNode captureState() {
        if (collectorUrls.isEmpty()) {
            return null;
        }
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        List<String> problems = new ArrayList<>();
        for (String base : collectorUrls) {
            String url = base.replaceAll("/+$", "") + CollectorCommand.CAPTURE_STATE_PATH + URLEncoder.encode(runId, StandardCharsets.UTF_8);
            try {
                HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(15)).GET().build(),
                        HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200) {
                    return Json.mapper().readTree(response.body());
                }
                if (response.statusCode() != 404) {
                    problems.add(base + " answered " + response.statusCode() + ": " + response.body().strip());
                }
            } catch (IOException e) {
                problems.add(base + ": " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        problems.forEach(p -> System.err.println("capture state: " + p));
        return Json.object().put("owner", "none of the collectors asked owns this run's partition");
    }

    private static void print(PrintStream out, ObjectNode s) {
        out.printf(Locale.ROOT, "run %s: %s%n", s.path("run_id").asText(), s.path("state").asText());
        if (s.has("request")) {
            out.printf(Locale.ROOT, "  request   partition %s offset %s, published %s%n", s.at("/request/partition"),
                    s.at("/request/offset"), s.at("/request/published_at").asText());
        }
        s.path("attempts").fields().forEachRemaining(e -> {
            JsonNode a = e.getValue();
            out.printf(Locale.ROOT, "  attempt   %s: worker %s since %s%s%s%n", e.getKey(), a.path("worker").asText("?"),
                    a.path("started_at").asText("?"), a.has("finished_at") ? ", finished " + a.path("finished_at").asText()
                            : a.has("abandoned") ? ", abandoned (its worker stopped; run again)" : ", running",
                    a.has("result_status") ? ", result " + a.path("result_status").asText()
                            + (a.has("error_code") ? " (" + a.path("error_code").asText() + ")" : "") : "");
        });
        if (s.has("durable")) {
            JsonNode d = s.get("durable");
            out.printf(Locale.ROOT, "  durable   %s at byte %s (collector %s)%s%n", d.path("file").asText(), d.path("byte_offset"),
                    d.path("collector").asText(), d.path("masked").asBoolean() ? ", MASKED: " + d.path("mask_reason").asText() : "");
        }
        if (s.has("capture")) {
            s.get("capture").fields().forEachRemaining(e -> {
                JsonNode c = e.getValue();
                out.printf(Locale.ROOT, "  capture   %s%n", c.isObject() && c.has("status")
                        ? String.format(Locale.ROOT, "%s: %s, version %s, %d entries%s", e.getKey(), c.path("status").asText().toLowerCase(Locale.ROOT),
                                c.path("version"), c.path("entries").size(), c.path("marks").isEmpty() ? "" : ", incomplete " + c.path("marks"))
                        : c.asText());
            });
        }
    }
}
