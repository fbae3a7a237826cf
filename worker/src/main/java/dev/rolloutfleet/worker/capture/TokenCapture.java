package dev.rolloutfleet.worker.capture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.CaptureEntry;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutResult.CaptureInfo;
import dev.rolloutfleet.common.wire.RolloutResult.Watermark;
import dev.rolloutfleet.common.wire.SchemaVersion;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * The token capture of one attempt: publishes one {@link CaptureEntry} per inference call to
 * {@code rollout.token-capture} (key {@code run_id/attempt/call_id}, so it lands on the results
 * partition of the run) and, once the rollout ends, says what was captured for the result's
 * {@code capture} block, with the watermark taken from the send acknowledgements. Used by the
 * attempt's thread only.
 */
public final class TokenCapture {

    public static final String CAPTURE_WRITE_FAILED = "capture_write_failed";
    public static final String NO_TOKEN_IDS = "no_token_ids";
    public static final String ENTRY_TOO_LARGE = "entry_too_large";

    private final Producer<String, byte[]> producer;
    private final String topic;
    private final String runId;
    private final String attempt;
    private final String agent;
    private final boolean participating;
    private final int maxEntryBytes;
    private final List<String> callIds = new ArrayList<>();
    private final List<Future<RecordMetadata>> sends = new ArrayList<>();
    private final Set<String> reasons = new LinkedHashSet<>();

    public TokenCapture(Producer<String, byte[]> producer, String topic, String runId, String attempt, String agent,
            boolean participating, int maxEntryBytes) {
        this.producer = producer;
        this.topic = topic;
        this.runId = runId;
        this.attempt = attempt;
        this.agent = agent;
        this.participating = participating;
        this.maxEntryBytes = maxEntryBytes;
    }

    /** A capture that records nothing: the rollout does not participate. */
    public static TokenCapture none(String agent) {
        return new TokenCapture(null, null, null, null, agent, false, 0);
    }

    /**
     * Whether {@code policy.config.token_id_capture} selects this rollout's agent (its
     * {@code policy_name}): {@code enabled} and either {@code all_agents} or the name in {@code agents}.
     */
    public static boolean participates(RolloutRequest request) {
        JsonNode config = request.policy() == null || request.policy().config() == null ? null
                : request.policy().config().get("token_id_capture");
        if (config == null || !config.path("enabled").asBoolean(false)) {
            return false;
        }
        if (config.path("all_agents").asBoolean(false)) {
            return true;
        }
        for (JsonNode agent : config.path("agents")) {
            if (agent.asText().equals(request.policy().policyName())) {
                return true;
            }
        }
        return false;
    }

    public boolean participating() {
        return participating;
    }

    /** Records one call; a call without token ids marks the capture incomplete instead. */
    public void record(String callId, String model, List<Integer> promptIds, List<Integer> generationIds,
            List<Double> logprobs, ObjectNode output) {
        if (!participating) {
            return;
        }
        if (promptIds == null || generationIds == null || logprobs == null) {
            reasons.add(NO_TOKEN_IDS);
            return;
        }
        CaptureEntry entry = new CaptureEntry(SchemaVersion.CURRENT, runId, attempt, callId, agent, model, promptIds,
                generationIds, logprobs, output, System.currentTimeMillis(), null);
        byte[] value = Json.encode(entry);
        if (value.length > maxEntryBytes) {
            reasons.add(ENTRY_TOO_LARGE);
            return;
        }
        callIds.add(callId);
        sends.add(producer.send(new ProducerRecord<>(topic, runId + "/" + attempt + "/" + callId, value)));
    }

    /** Waits for the sends and describes the capture for the result. */
    public CaptureInfo finish() {
        if (!participating) {
            return new CaptureInfo(agent, false, List.of(), false, List.of(), null);
        }
        Watermark watermark = null;
        for (Future<RecordMetadata> send : sends) {
            try {
                RecordMetadata metadata = send.get();
                if (watermark == null || metadata.offset() > watermark.offset()) {
                    watermark = new Watermark(metadata.partition(), metadata.offset());
                }
            } catch (ExecutionException e) {
                reasons.add(CAPTURE_WRITE_FAILED);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                reasons.add(CAPTURE_WRITE_FAILED);
                break;
            }
        }
        return new CaptureInfo(agent, true, List.copyOf(callIds), !reasons.isEmpty(), List.copyOf(reasons), watermark);
    }
}
