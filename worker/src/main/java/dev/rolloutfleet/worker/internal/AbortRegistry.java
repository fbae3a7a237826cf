package dev.rolloutfleet.worker.internal;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The aborts this worker has seen, and the rollouts it is running, by {@code run_id}. An abort
 * reaches a running rollout at once, and one that starts later as soon as it starts. Remembers
 * the most recent {@code capacity} aborted run ids. Thread-safe.
 */
final class AbortRegistry {

    private final Map<String, RolloutTask> live = new ConcurrentHashMap<>();
    private final Map<String, String> aborted;

    AbortRegistry(int capacity) {
        this.aborted = new LinkedHashMap<>(16, 0.75f, false) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
                return size() > capacity;
            }
        };
    }

    void abort(String runId, String reason) {
        synchronized (aborted) {
            aborted.put(runId, reason == null ? "" : reason);
        }
        RolloutTask task = live.get(runId);
        if (task != null) {
            task.abort(reason);
        }
    }

    /** Called once the task knows its run id; applies an abort that came first. */
    void register(String runId, RolloutTask task) {
        task.runId(runId);
        live.put(runId, task);
        String reason;
        synchronized (aborted) {
            reason = aborted.get(runId);
        }
        if (reason != null) {
            task.abort(reason);
        }
    }

    void unregister(RolloutTask task) {
        String runId = task.runId();
        if (runId != null) {
            live.remove(runId, task);
        }
    }
}
