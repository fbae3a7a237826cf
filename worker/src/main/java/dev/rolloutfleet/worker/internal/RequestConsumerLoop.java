package dev.rolloutfleet.worker.internal;

import com.codahale.metrics.MetricRegistry;
import dev.rolloutfleet.worker.WorkerConfig;
import dev.rolloutfleet.worker.rollout.RolloutRunner;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's engine. One consumer thread (this {@link Runnable}) polls, pauses, resumes and
 * commits; every rollout runs on a virtual thread of its own and reports back through a
 * completion queue. Concurrency is bounded worker-wide and per partition: a partition with
 * records it cannot start yet is paused, and resumes once in-flight work falls below a low mark.
 * Polling never stops, however long rollouts take.
 *
 * <p>Each partition has an {@link InflightLedger}: the committed offset is the one below which
 * every record is finished (outputs acknowledged), and the finished offsets above it travel in
 * the commit metadata, so a new owner skips them instead of running them again.
 *
 * <p>On revocation, queued records are dropped, running ones get {@code revokeGrace} to finish,
 * the ledger is committed, and what is still running is cancelled without publishing; the new
 * owner runs it. Only the consumer thread touches the consumer and the partition states;
 * {@link #stop()} may be called from any thread.
 */
public final class RequestConsumerLoop implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(RequestConsumerLoop.class);
    /** With a backlog, poll this often: enough to heartbeat, rebalance and fetch for unpaused partitions. */
    private static final Duration BACKLOG_POLL_INTERVAL = Duration.ofMillis(100);
    private static final Duration PUBLISH_WAIT = Duration.ofSeconds(30);

    private final Consumer<String, byte[]> consumer;
    private final WorkerConfig config;
    private final RequestHandler handler;
    private final WorkerMetrics metrics;
    private final long window;
    private final int lowMark;
    private final int partitionLowMark;
    private final Map<TopicPartition, PartitionState> owned = new LinkedHashMap<>();
    private final LinkedBlockingQueue<RolloutTask> completions = new LinkedBlockingQueue<>();
    private final ScheduledExecutorService timer;
    private final ThreadFactory rolloutThreads = Thread.ofVirtual().name("rollout-", 0).factory();
    private int running;
    private long lastCommitNanos;
    private volatile boolean stopping;
    private volatile boolean assigned;

    RequestConsumerLoop(Consumer<String, byte[]> consumer, Producer<String, byte[]> producer, WorkerConfig config,
            RolloutRunner runner, AbortRegistry aborts, MetricRegistry registry, Clock clock) {
        this.consumer = consumer;
        this.config = config;
        this.metrics = new WorkerMetrics(registry);
        this.handler = new RequestHandler(producer, config.topics(), config.workerId(), config.maxRequestBytes(), runner,
                aborts, metrics, clock);
        this.window = LedgerMetadata.windowFor(config.maxCommitMetadataChars());
        this.lowMark = Math.max(0, config.maxInflight() - Math.max(1, config.maxInflight() / 10));
        this.partitionLowMark = Math.max(0, config.maxInflightPerPartition() - Math.max(1, config.maxInflightPerPartition() / 10));
        ScheduledThreadPoolExecutor deadlines = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "rollout-deadlines-" + config.workerId());
            t.setDaemon(true);
            return t;
        });
        // A cancelled deadline (the rollout finished in time) must leave the queue at once, not in an hour.
        deadlines.setRemoveOnCancelPolicy(true);
        this.timer = deadlines;
    }

    @Override
    public void run() {
        try {
            consumer.subscribe(List.of(config.topics().requests()), new Rebalance());
            long lastPoll = 0;
            while (!stopping) {
                drainCompletions();
                startQueued();
                maybeCommit(false);
                boolean backlog = owned.values().stream().anyMatch(p -> !p.queued.isEmpty());
                if (backlog && System.nanoTime() - lastPoll < BACKLOG_POLL_INTERVAL.toNanos()) {
                    // Nothing more can start until a rollout finishes: wait for that, not in poll(), which
                    // would churn through the buffered fetches of every paused partition.
                    awaitCompletion(BACKLOG_POLL_INTERVAL);
                    continue;
                }
                try {
                    for (ConsumerRecord<String, byte[]> record : consumer.poll(backlog ? Duration.ZERO : config.pollTimeout())) {
                        enqueue(record);
                    }
                } catch (WakeupException e) {
                    if (!stopping) {
                        throw e;
                    }
                }
                lastPoll = System.nanoTime();
                assigned = !consumer.assignment().isEmpty();
                startQueued();
                updatePauses();
            }
            release(new ArrayList<>(owned.keySet()), "the worker is shutting down");
        } catch (KafkaException e) {
            log.error("the worker's consumer failed; stopping. In-flight rollouts are cancelled and run again elsewhere", e);
            owned.values().forEach(p -> cancelAll(p, "the worker's consumer failed"));
        } finally {
            timer.shutdownNow();
            try {
                consumer.close();
            } catch (KafkaException e) {
                log.warn("closing the consumer failed", e);
            }
        }
    }

    private void enqueue(ConsumerRecord<String, byte[]> record) {
        PartitionState state = owned.get(new TopicPartition(record.topic(), record.partition()));
        if (state == null || state.revoking) {
            return;
        }
        if (state.ledger == null) {
            // No commit to start from: the first record fetched is where this partition begins.
            state.ledger = new InflightLedger(record.offset(), new java.util.TreeSet<>(), window);
        }
        if (state.ledger.alreadyFinished(record.offset())) {
            state.ledger.skip(record.offset());
            state.dirty = true;
            metrics.ledgerSkipped.mark();
            return;
        }
        state.ledger.take(record.offset());
        state.queued.add(new RolloutTask(record, handler, timer, completions::add));
        metrics.queued.incrementAndGet();
    }

    /** Starts queued records, one per partition per round for fairness, while slots and windows allow. */
    private void startQueued() {
        boolean progress = true;
        while (progress && running < config.maxInflight()) {
            progress = false;
            for (PartitionState state : owned.values()) {
                if (running >= config.maxInflight()) {
                    break;
                }
                RolloutTask next = state.queued.peek();
                if (next == null || state.revoking || state.running.size() >= config.maxInflightPerPartition()
                        || !state.ledger.canTake(next.offset())) {
                    continue;
                }
                state.queued.poll();
                metrics.queued.decrementAndGet();
                state.running.put(next.offset(), next);
                running++;
                metrics.inflight.set(running);
                rolloutThreads.newThread(next).start();
                progress = true;
            }
        }
    }

    private void awaitCompletion(Duration timeout) {
        try {
            RolloutTask done = completions.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (done != null) {
                complete(done);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopping = true;
        }
    }

    private void drainCompletions() {
        RolloutTask done;
        while ((done = completions.poll()) != null) {
            complete(done);
        }
    }

    /**
     * Handles one of a task's two reports: the first frees its in-flight slot (it began
     * publishing, or ended), the last finishes its offset in the ledger if its outputs are on the
     * broker. Both may arrive before either is handled.
     */
    private void complete(RolloutTask task) {
        PartitionState state = owned.get(task.partition);
        if (state == null) {
            return;
        }
        // Match the task itself: a stale report must not retire a newer task for the same offset.
        boolean wasRunning = state.running.remove(task.offset(), task);
        if (wasRunning) {
            running--;
            metrics.inflight.set(running);
        }
        if (task.isDone()) {
            state.publishing.remove(task.offset(), task);
            if (task.finished()) {
                state.ledger.finish(task.offset());
                state.dirty = true;
            }
        } else if (wasRunning) {
            state.publishing.put(task.offset(), task);
        }
    }

    /**
     * Pauses a partition that holds records it cannot start; resumes it once its queue is empty
     * and in-flight work is below the low marks, so a partition is not paused and resumed on
     * every completion.
     */
    private void updatePauses() {
        List<TopicPartition> toPause = new ArrayList<>();
        List<TopicPartition> toResume = new ArrayList<>();
        int paused = 0;
        for (PartitionState state : owned.values()) {
            boolean shouldPause = !state.queued.isEmpty()
                    || (state.paused && (running > lowMark || state.running.size() > partitionLowMark));
            if (shouldPause && !state.paused) {
                toPause.add(state.partition);
            } else if (!shouldPause && state.paused) {
                toResume.add(state.partition);
            }
            state.paused = shouldPause;
            paused += shouldPause ? 1 : 0;
        }
        if (!toPause.isEmpty()) {
            consumer.pause(toPause);
        }
        if (!toResume.isEmpty()) {
            consumer.resume(toResume);
        }
        metrics.pausedPartitions.set(paused);
    }

    private void maybeCommit(boolean sync) {
        long now = System.nanoTime();
        if (!sync && now - lastCommitNanos < config.commitInterval().toNanos()) {
            return;
        }
        commit(owned.values(), sync);
        lastCommitNanos = now;
        updateLag();
    }

    private void commit(Collection<PartitionState> states, boolean sync) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (PartitionState state : states) {
            if (state.dirty && state.ledger != null) {
                long committed = state.ledger.committable();
                offsets.put(state.partition, new OffsetAndMetadata(committed, state.ledger.metadata()));
                state.lastCommitted = committed;
                state.dirty = false;
            }
        }
        if (offsets.isEmpty()) {
            return;
        }
        if (sync) {
            try {
                consumer.commitSync(offsets);
            } catch (KafkaException e) {
                metrics.commitFailures.mark();
                log.warn("committing {} failed; the next owner may run those records again", offsets.keySet(), e);
            }
        } else {
            consumer.commitAsync(offsets, (committed, error) -> {
                if (error != null) {
                    metrics.commitFailures.mark();
                    log.warn("an asynchronous commit failed; the next one carries the same offsets: {}", error.toString());
                    committed.keySet().forEach(tp -> {
                        PartitionState state = owned.get(tp);
                        if (state != null) {
                            state.dirty = true;
                        }
                    });
                }
            });
        }
    }

    private void updateLag() {
        long lag = 0;
        int uncommitted = 0;
        for (PartitionState state : owned.values()) {
            if (state.ledger == null) {
                continue;
            }
            OptionalLong behindEnd = consumer.currentLag(state.partition);
            long committable = state.ledger.committable();
            uncommitted += state.ledger.unfinishedCount();
            try {
                long position = consumer.position(state.partition, Duration.ZERO);
                lag += Math.max(0, position - committable) + (behindEnd.isPresent() ? behindEnd.getAsLong() : 0);
            } catch (KafkaException e) {
                // Position not known yet; the next round reports it.
            }
        }
        metrics.committedLag.set(lag);
        metrics.uncommitted.set(uncommitted);
    }

    /**
     * Gives up partitions cleanly: no new starts, running rollouts get the grace period, the
     * ledger is committed, and what is still running is cancelled (not published).
     */
    private void release(Collection<TopicPartition> partitions, String why) {
        List<PartitionState> leaving = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            PartitionState state = owned.get(tp);
            if (state != null) {
                state.revoking = true;
                metrics.queued.addAndGet(-state.queued.size());
                state.queued.clear();
                leaving.add(state);
            }
        }
        if (leaving.isEmpty()) {
            return;
        }
        awaitRunning(leaving, config.revokeGrace());
        int cancelled = 0;
        for (PartitionState state : leaving) {
            cancelled += cancelAll(state, why);
        }
        // Tasks already publishing are let finish, so their outputs are not left half-acknowledged.
        awaitRunning(leaving, PUBLISH_WAIT);
        leaving.forEach(state -> state.dirty = state.ledger != null);
        commit(leaving, true);
        for (PartitionState state : leaving) {
            running -= state.running.size();
            owned.remove(state.partition);
        }
        metrics.inflight.set(running);
        if (cancelled > 0) {
            log.info("released {}: {} rollouts cancelled ({}); their next owner runs them", partitions, cancelled, why);
        }
    }

    private int cancelAll(PartitionState state, String why) {
        int cancelled = 0;
        for (RolloutTask task : state.running.values()) {
            if (task.cancel(why)) {
                cancelled++;
                metrics.cancelled.mark();
            }
        }
        return cancelled;
    }

    /** Processes reports until the given partitions hold nothing that can still publish, or time runs out. */
    private void awaitRunning(List<PartitionState> states, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (states.stream().anyMatch(s -> !s.publishing.isEmpty()
                || s.running.values().stream().anyMatch(t -> !t.isCancelled()))) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            try {
                RolloutTask done = completions.poll(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)), TimeUnit.NANOSECONDS);
                if (done != null) {
                    complete(done);
                    drainCompletions();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** True once the group has given this worker at least one partition. */
    public boolean isAssigned() {
        return assigned;
    }

    public void stop() {
        stopping = true;
        consumer.wakeup();
    }

    /** Seeds ledgers from the previous owner's commit on assignment; releases cleanly on revocation. */
    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (partitions.isEmpty()) {
                return;
            }
            Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new HashSet<>(partitions));
            for (TopicPartition tp : partitions) {
                OffsetAndMetadata commit = committed.get(tp);
                InflightLedger ledger = commit == null ? null
                        : new InflightLedger(commit.offset(), LedgerMetadata.decode(commit.offset(), commit.metadata()), window);
                owned.put(tp, new PartitionState(tp, ledger));
            }
            assigned = true;
            log.info("assigned {}", partitions);
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                log.info("revoked {}", partitions);
                release(partitions, "the partition was revoked");
            }
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            log.warn("lost {} without a clean handover; cancelling their rollouts", partitions);
            for (TopicPartition tp : partitions) {
                PartitionState state = owned.remove(tp);
                if (state != null) {
                    cancelAll(state, "the partition was lost");
                    running -= state.running.size();
                    metrics.queued.addAndGet(-state.queued.size());
                }
            }
            metrics.inflight.set(running);
        }
    }
}
