package dev.rolloutfleet.collector.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.collector.build.BuiltTrajectory;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutResult;

/**
 * The durable line of a participating result: the result as published, plus the rebuilt token
 * trajectory ({@code tokens}, {@code loss_mask}, {@code logprobs}, {@code turn_spans}) or the mask
 * ({@code mask_sample}, {@code mask_reason}), and {@code capture_build} with the snapshot, its
 * version, the build's diagnostics and counts.
 */
final class DurableLine {

    private DurableLine() {}

    static byte[] withTrajectory(RolloutResult result, CaptureBuilds.Pending build) {
        ObjectNode line = (ObjectNode) Json.tree(result);
        BuiltTrajectory built = build.built;
        line.put("mask_sample", built.masked());
        if (built.masked()) {
            line.put("mask_reason", built.maskReason());
        } else {
            line.set("tokens", Json.tree(built.tokens()));
            line.set("loss_mask", Json.tree(built.lossMask()));
            line.set("logprobs", Json.tree(built.logprobs()));
            ArrayNode spans = line.putArray("turn_spans");
            built.spans().forEach(span -> spans.add(Json.tree(span)));
        }
        ObjectNode info = line.putObject("capture_build");
        info.put("snapshot_id", build.snapshotId);
        if (build.frozen != null) {
            info.put("version", build.frozen.version());
        }
        info.set("diagnostics", built.diagnostics());
        info.set("metrics", Json.tree(built.metrics()));
        return Json.encode(line);
    }
}
