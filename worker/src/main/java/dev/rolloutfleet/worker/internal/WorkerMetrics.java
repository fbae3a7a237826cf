package dev.rolloutfleet.worker.internal;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import dev.rolloutfleet.common.wire.RolloutStatus;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** The worker's metrics, registered once per registry. Thread-safe. */
final class WorkerMetrics {

    final Meter started;
    final Meter ok;
    final Meter failed;
    final Meter invalid;
    final Meter aborted;
    final Meter cancelled;
    final Meter deadLettered;
    final Meter outputFailures;
    final Meter ledgerSkipped;
    final Meter commitFailures;
    final Timer rolloutDuration;
    final Timer queueDelay;
    final AtomicInteger inflight = new AtomicInteger();
    final AtomicInteger queued = new AtomicInteger();
    final AtomicInteger pausedPartitions = new AtomicInteger();
    final AtomicLong committedLag = new AtomicLong();
    final AtomicInteger uncommitted = new AtomicInteger();

    WorkerMetrics(MetricRegistry registry) {
        started = registry.meter("worker.rollouts.started");
        ok = registry.meter("worker.rollouts.ok");
        failed = registry.meter("worker.rollouts.failed");
        invalid = registry.meter("worker.rollouts.invalid");
        aborted = registry.meter("worker.rollouts.aborted");
        cancelled = registry.meter("worker.rollouts.cancelled");
        deadLettered = registry.meter("worker.requests.dlq");
        outputFailures = registry.meter("worker.outputs.send_failed");
        ledgerSkipped = registry.meter("worker.ledger.skipped_finished");
        commitFailures = registry.meter("worker.commits.failed");
        rolloutDuration = registry.timer("worker.rollout.duration");
        queueDelay = registry.timer("worker.rollout.queue_delay");
        registry.register("worker.inflight", (Gauge<Integer>) inflight::get);
        registry.register("worker.queued", (Gauge<Integer>) queued::get);
        registry.register("worker.partitions.paused", (Gauge<Integer>) pausedPartitions::get);
        registry.register("worker.committed_lag", (Gauge<Long>) committedLag::get);
        registry.register("worker.uncommitted", (Gauge<Integer>) uncommitted::get);
    }

    void finished(RolloutStatus status, long durationMs) {
        switch (status) {
            case OK -> ok.mark();
            case FAILED -> failed.mark();
            case INVALID -> invalid.mark();
            case ABORTED -> aborted.mark();
        }
        if (status != RolloutStatus.INVALID) {
            rolloutDuration.update(durationMs, TimeUnit.MILLISECONDS);
        }
    }
}
