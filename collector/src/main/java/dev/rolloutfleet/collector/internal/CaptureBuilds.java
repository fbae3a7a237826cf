package dev.rolloutfleet.collector.internal;

import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import dev.rolloutfleet.collector.build.BuiltTrajectory;
import dev.rolloutfleet.collector.build.TrajectoryBuilder;
import dev.rolloutfleet.collector.capture.AttemptState;
import dev.rolloutfleet.collector.capture.CaptureKey;
import dev.rolloutfleet.collector.capture.CaptureMaterializer;
import dev.rolloutfleet.collector.capture.CaptureStore;
import dev.rolloutfleet.common.wire.CaptureEntry;
import dev.rolloutfleet.common.wire.FreezeCommand;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RetireCommand;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.SchemaVersion;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Freezes and rebuilds the capture evidence of a batch of participating results. For the batch:
 * wait until each result's capture partition has passed its watermark (bounded by the capture
 * wait; past it the build is masked {@code incomplete}, reason {@code capture_lagging}); publish a
 * freeze per attempt and wait until each is applied; then build each frozen snapshot. Retires are
 * published separately, only for clean builds whose line is durable. Used by the collector's
 * consumer thread only.
 */
final class CaptureBuilds {

    static final String CAPTURE_LAGGING = "capture_lagging";

    /** One participating result of the batch, and what became of its evidence. */
    static final class Pending {
        final RolloutResult result;
        final int partition;
        String snapshotId;
        long freezeOffset = -1;
        boolean lagging;
        AttemptState frozen;
        BuiltTrajectory built;

        Pending(RolloutResult result, int partition) {
            this.result = result;
            this.partition = partition;
        }
    }

    private final CaptureMaterializer materializer;
    private final Producer<String, byte[]> producer;
    private final String captureTopic;
    private final String collectorId;
    private final Duration captureWait;
    private final TrajectoryBuilder builder = new TrajectoryBuilder();
    private final Timer watermarkWait;
    private final Clock clock;

    CaptureBuilds(CaptureMaterializer materializer, Producer<String, byte[]> producer, String captureTopic,
            String collectorId, Duration captureWait, MetricRegistry registry, Clock clock) {
        this.materializer = materializer;
        this.producer = producer;
        this.captureTopic = captureTopic;
        this.collectorId = collectorId;
        this.captureWait = captureWait;
        this.watermarkWait = registry.timer("collector.capture.watermark_wait");
        this.clock = clock;
    }

    /** Freezes every attempt of the batch and builds its snapshot. */
    void freezeAndBuild(List<Pending> batch) throws InterruptedException, ExecutionException {
        long deadline = System.nanoTime() + captureWait.toNanos();
        try (Timer.Context ignored = watermarkWait.time()) {
            for (Pending p : batch) {
                RolloutResult.Watermark watermark = p.result.capture().watermark();
                if (watermark != null) {
                    Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
                    p.lagging = !materializer.awaitApplied(p.partition, watermark.offset() + 1, left);
                }
            }
        }
        Map<Pending, Future<RecordMetadata>> freezes = new LinkedHashMap<>();
        for (Pending p : batch) {
            p.snapshotId = UUID.randomUUID().toString();
            FreezeCommand freeze = new FreezeCommand(SchemaVersion.CURRENT, p.result.runId(), p.result.attempt(),
                    p.snapshotId, collectorId, clock.millis(), null);
            freezes.put(p, producer.send(new ProducerRecord<>(captureTopic,
                    CaptureKey.of(p.result.runId(), p.result.attempt(), CaptureKey.FREEZE), Json.encode(freeze))));
        }
        for (Map.Entry<Pending, Future<RecordMetadata>> f : freezes.entrySet()) {
            Pending p = f.getKey();
            p.freezeOffset = f.getValue().get().offset();
            if (!materializer.awaitApplied(p.partition, p.freezeOffset + 1, captureWait)) {
                p.lagging = true;
            }
            CaptureStore store = materializer.store(p.partition);
            p.frozen = store == null ? null : store.state(p.result.runId(), p.result.attempt());
            p.built = build(p, store);
        }
    }

    private BuiltTrajectory build(Pending p, CaptureStore store) {
        List<String> incomplete = new ArrayList<>();
        RolloutResult.CaptureInfo capture = p.result.capture();
        if (Boolean.TRUE.equals(capture.incomplete())) {
            incomplete.addAll(capture.reasons() == null || capture.reasons().isEmpty()
                    ? List.of("reported_by_worker") : capture.reasons());
        }
        if (p.lagging) {
            incomplete.add(CAPTURE_LAGGING);
        }
        if (p.frozen == null || store == null) {
            return builder.build(List.of(), incomplete);
        }
        incomplete.addAll(p.frozen.marks().keySet());
        if (p.frozen.status() != AttemptState.Status.FROZEN || !p.snapshotId.equals(p.frozen.snapshotId())) {
            incomplete.add("snapshot_superseded");
        }
        List<CaptureEntry> entries = store.entries(p.result.runId(), p.result.attempt());
        return builder.build(entries, incomplete);
    }

    /** True when the attempt's evidence may be retired: frozen by us, and its build clean. */
    static boolean retirable(Pending p) {
        return p.frozen != null && p.frozen.status() == AttemptState.Status.FROZEN
                && p.snapshotId.equals(p.frozen.snapshotId()) && !p.built.masked();
    }

    Future<RecordMetadata> retire(Pending p) {
        RetireCommand retire = new RetireCommand(SchemaVersion.CURRENT, p.result.runId(), p.result.attempt(), p.snapshotId,
                p.frozen.version(), clock.millis(), null);
        return producer.send(new ProducerRecord<>(captureTopic,
                CaptureKey.of(p.result.runId(), p.result.attempt(), CaptureKey.RETIRE), Json.encode(retire)));
    }

}
