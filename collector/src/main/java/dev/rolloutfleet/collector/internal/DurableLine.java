package dev.rolloutfleet.collector.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.collector.build.BuiltTrajectory;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutResult;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The durable line of a participating result: the result as published, plus the rebuilt token
 * trajectory ({@code tokens}, {@code loss_mask}, {@code logprobs}, {@code turn_spans}) or the mask
 * ({@code mask_sample}, {@code mask_reason}), and {@code capture_build} with the snapshot, its
 * version, the build's diagnostics and counts.
 */
final class DurableLine {

    private static final Set<String> ADDED = Set.of("mask_sample", "mask_reason", "tokens", "loss_mask", "logprobs",
            "turn_spans", "capture_build");

    private DurableLine() {}

    static byte[] withTrajectory(RolloutResult result, CaptureBuilds.Pending build) {
        BuiltTrajectory built = build.built;
        Map<String, Object> added = new LinkedHashMap<>();
        added.put("mask_sample", built.masked());
        if (built.masked()) {
            added.put("mask_reason", built.maskReason());
        } else {
            added.put("tokens", built.tokens());
            added.put("loss_mask", built.lossMask());
            added.put("logprobs", built.logprobs());
            added.put("turn_spans", built.spans());
        }
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("snapshot_id", build.snapshotId);
        if (build.frozen != null) {
            info.put("version", build.frozen.version());
        }
        info.put("diagnostics", built.diagnostics());
        info.put("metrics", built.metrics());
        added.put("capture_build", info);
        if (result.extra().keySet().stream().anyMatch(ADDED::contains)) {
            // The result already carries a field of ours: the collector's word replaces it.
            ObjectNode line = (ObjectNode) Json.tree(result);
            line.setAll((ObjectNode) Json.tree(added));
            return Json.encode(line);
        }
        // Writing the result and the additions as two objects and joining them costs a fraction of
        // building one tree: token arrays are tens of thousands of numbers.
        return join(Json.encode(result), Json.encode(added));
    }

    /** {@code {"a":1}} and {@code {"b":2}} give {@code {"a":1,"b":2}}; both must be objects with at least one field. */
    static byte[] join(byte[] object, byte[] fields) {
        int end = object.length - 1;
        while (object[end] != '}') {
            end--;
        }
        int start = 0;
        while (fields[start] != '{') {
            start++;
        }
        byte[] out = new byte[end + 1 + (fields.length - start - 1)];
        System.arraycopy(object, 0, out, 0, end);
        out[end] = ',';
        System.arraycopy(fields, start + 1, out, end + 1, fields.length - start - 1);
        return out;
    }
}
