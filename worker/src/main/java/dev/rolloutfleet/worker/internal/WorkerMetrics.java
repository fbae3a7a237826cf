package dev.rolloutfleet.worker.internal;

import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import dev.rolloutfleet.common.wire.RolloutStatus;
import java.util.concurrent.TimeUnit;

/** The worker's meters and timers, registered once per registry. Thread-safe. */
final class WorkerMetrics {

    final Meter started;
    final Meter ok;
    final Meter failed;
    final Meter invalid;
    final Meter aborted;
    final Meter deadLettered;
    final Meter outputFailures;
    final Timer rolloutDuration;
    final Timer queueDelay;

    WorkerMetrics(MetricRegistry registry) {
        started = registry.meter("worker.rollouts.started");
        ok = registry.meter("worker.rollouts.ok");
        failed = registry.meter("worker.rollouts.failed");
        invalid = registry.meter("worker.rollouts.invalid");
        aborted = registry.meter("worker.rollouts.aborted");
        deadLettered = registry.meter("worker.requests.dlq");
        outputFailures = registry.meter("worker.outputs.send_failed");
        rolloutDuration = registry.timer("worker.rollout.duration");
        queueDelay = registry.timer("worker.rollout.queue_delay");
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
