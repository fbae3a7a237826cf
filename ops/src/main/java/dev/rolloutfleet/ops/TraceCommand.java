package dev.rolloutfleet.ops;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.TraceEvent;
import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code fleet trace RUN_ID}: the timeline of one rollout, per attempt, from its trace events.
 * Reads only the run's partition of the traces topic (the run id's hash picks it).
 */
@Command(name = "trace", mixinStandardHelpOptions = true,
        description = "Print the timeline of one rollout per attempt: decisions, LM calls, env steps, rewards, the outcome.")
final class TraceCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "RUN_ID", description = "The rollout's run_id.")
    String runId;

    @Mixin
    KafkaOptions kafka;

    @Option(names = "--json", description = "Print the raw trace events, one JSON object per line.")
    boolean json;

    @Override
    public Integer call() {
        PrintStream out = System.out;
        List<TraceEvent> events = read();
        if (events.isEmpty()) {
            System.err.println("no trace events for run " + runId + " on " + kafka.topics().traces());
            return 1;
        }
        if (json) {
            events.forEach(e -> out.println(Json.encodeToString(e)));
            return 0;
        }
        Map<String, List<TraceEvent>> byAttempt = new LinkedHashMap<>();
        events.forEach(e -> byAttempt.computeIfAbsent(e.attempt(), k -> new ArrayList<>()).add(e));
        for (Map.Entry<String, List<TraceEvent>> attempt : byAttempt.entrySet()) {
            List<TraceEvent> timeline = attempt.getValue();
            timeline.sort(Comparator.comparingLong(TraceEvent::seq));
            long start = timeline.get(0).ts();
            out.printf(Locale.ROOT, "run %s attempt %s (started %s)%n", runId, attempt.getKey(), Instant.ofEpochMilli(start));
            for (TraceEvent e : timeline) {
                out.printf(Locale.ROOT, "  +%7d ms  %-17s %s%n", e.ts() - start, e.type(), describe(e));
            }
        }
        return 0;
    }

    private List<TraceEvent> read() {
        return RunRecords.read(kafka.connection(), kafka.topics().traces(), runId).stream()
                .map(record -> Json.decode(record.value(), TraceEvent.class)).collect(Collectors.toCollection(ArrayList::new));
    }

    private static String describe(TraceEvent e) {
        JsonNode p = e.payload() == null ? Json.object() : e.payload();
        return switch (e.type()) {
            case TraceEvent.ROLLOUT_STARTED -> String.format(Locale.ROOT, "env %s, policy %s, seed %s, worker %s (partition %s, offset %s)",
                    p.path("env_name").asText(), p.path("policy_name").asText(), p.path("seed").asText(),
                    p.path("worker_id").asText("?"), p.path("partition").asText("?"), p.path("offset").asText("?"));
            case TraceEvent.DECISION_STARTED -> "decision " + p.path("decision_index").asText();
            case TraceEvent.LM_CALL -> String.format(Locale.ROOT, "model %s, %s prompt + %s completion tokens, %.0f ms, %s retries, %s",
                    p.path("model").asText(), p.at("/usage/prompt_tokens").asText("?"), p.at("/usage/completion_tokens").asText("?"),
                    p.path("inference_ms").asDouble(), p.path("retries").asText("0"), p.path("finish_reason").asText());
            case TraceEvent.ENV_STEP -> String.format(Locale.ROOT, "step %s: reward %s, done %s, %s",
                    p.path("step").asText(), p.path("reward").asText(), p.path("done").asText(), p.path("tool_calls"));
            case TraceEvent.DECISION_REWARD -> String.format(Locale.ROOT, "reward %s, new achievements %s",
                    p.path("reward").asText(), p.path("all"));
            case TraceEvent.ROLLOUT_FINISHED -> String.format(Locale.ROOT, "%s after %s ops, %s steps, mean return %s%s",
                    p.path("status").asText(), p.path("ops_executed").asText(), p.path("num_steps").asText(),
                    p.path("mean_return").asText(), p.has("error_code")
                            ? " — " + p.path("error_code").asText() + ": " + p.path("error_message").asText() : "");
            default -> p.toString();
        };
    }
}
