package dev.rolloutfleet.collector.capture;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import dev.rolloutfleet.collector.capture.CaptureStore.Emission;
import dev.rolloutfleet.collector.capture.CaptureStore.Outcome;
import dev.rolloutfleet.common.topics.RunIdPartitioner;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the collector's token-capture partitions materialized in RocksDB: one {@link CaptureStore}
 * per partition, restored from its checkpoint when the partition is added and fed continuously
 * from then on. What the stores emit (incomplete marks, retired markers, tombstones) is published
 * back to the topic; what a restore could not publish is published once it has caught up. Runs on
 * its own thread, the only one that applies records; the results loop adds and removes partitions
 * and reads stores through the methods here, which are thread-safe.
 */
public final class CaptureMaterializer implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(CaptureMaterializer.class);
    private static final Duration SWEEP_EVERY = Duration.ofMinutes(1);

    private final Consumer<String, byte[]> consumer;
    private final Producer<String, byte[]> producer;
    private final String topic;
    private final Path storeDir;
    private final Duration retiredTtl;
    private final Clock clock;
    private final Map<Integer, CaptureStore> stores = new ConcurrentHashMap<>();
    /** Offset after the last record applied, per partition; readable from any thread. */
    private final Map<Integer, Long> applied = new ConcurrentHashMap<>();
    private final Map<Integer, Long> restoreEnds = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private final Object progress = new Object();
    private final Meter retireStale;
    private final Meter lateWriteRefused;
    private final Meter retired;
    private final Meter incompleteDetected;
    private final Timer restoreTime;
    private final Counter restoring;
    private volatile boolean running = true;
    private long lastSweep;

    public CaptureMaterializer(Consumer<String, byte[]> consumer, Producer<String, byte[]> producer, String topic,
            Path storeDir, Duration retiredTtl, MetricRegistry registry, Clock clock) {
        this.consumer = consumer;
        this.producer = producer;
        this.topic = topic;
        this.storeDir = storeDir;
        this.retiredTtl = retiredTtl;
        this.clock = clock;
        this.retireStale = registry.meter("collector.capture.retire_stale");
        this.lateWriteRefused = registry.meter("collector.capture.late_write_refused");
        this.retired = registry.meter("collector.capture.retired");
        this.incompleteDetected = registry.meter("collector.capture.incomplete_detected");
        this.restoreTime = registry.timer("collector.capture.restore");
        this.restoring = registry.counter("collector.capture.partitions_restoring");
        registry.register("collector.capture.attempts_held", (Gauge<Integer>) () ->
                stores.values().stream().mapToInt(CaptureStore::attempts).sum());
    }

    @Override
    public void run() {
        try {
            while (running) {
                Runnable command;
                while ((command = commands.poll()) != null) {
                    command.run();
                }
                if (!consumer.assignment().isEmpty()) {
                    try {
                        for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                            apply(record);
                        }
                    } catch (WakeupException e) {
                        // A command is waiting, or the materializer is stopping; the loop sees which.
                        continue;
                    }
                    markProgress();
                } else {
                    Thread.sleep(20);
                }
                maybeSweep();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            stores.values().forEach(CaptureStore::close);
            stores.clear();
            consumer.close();
        }
    }

    private void apply(ConsumerRecord<String, byte[]> record) {
        CaptureStore store = stores.get(record.partition());
        if (store == null) {
            return;
        }
        Outcome outcome = store.apply(record.key(), record.value(), record.offset());
        switch (outcome.effect()) {
            case RETIRE_STALE -> retireStale.mark();
            case LATE_WRITE_REFUSED -> lateWriteRefused.mark();
            case RETIRED -> retired.mark();
            case INCOMPLETE_DETECTED -> incompleteDetected.mark();
            default -> { }
        }
        if (!restoreEnds.containsKey(record.partition())) {
            publish(outcome.emissions());
        }
    }

    /** Ends restores that have caught up, publishing what they owe, and wakes waiting readers. */
    private void markProgress() {
        // The position covers offsets with no record (compacted away, transaction markers) too.
        for (TopicPartition tp : consumer.assignment()) {
            applied.put(tp.partition(), consumer.position(tp));
        }
        for (Map.Entry<Integer, Long> restore : restoreEnds.entrySet()) {
            int partition = restore.getKey();
            TopicPartition tp = new TopicPartition(topic, partition);
            if (consumer.position(tp) >= restore.getValue()) {
                restoreEnds.remove(partition);
                CaptureStore store = stores.get(partition);
                List<Emission> owed = store.owed();
                publish(owed);
                restoring.dec();
                log.info("capture partition {} restored up to offset {} ({} owed records republished)", partition,
                        restore.getValue(), owed.size());
            }
        }
        synchronized (progress) {
            progress.notifyAll();
        }
    }

    private void maybeSweep() {
        long now = clock.millis();
        if (now - lastSweep < SWEEP_EVERY.toMillis()) {
            return;
        }
        lastSweep = now;
        for (Map.Entry<Integer, CaptureStore> entry : stores.entrySet()) {
            if (!restoreEnds.containsKey(entry.getKey())) {
                publish(entry.getValue().sweep(now, retiredTtl));
            }
        }
    }

    private void publish(List<Emission> emissions) {
        for (Emission emission : emissions) {
            producer.send(new ProducerRecord<>(topic, emission.key(), emission.value()), (metadata, error) -> {
                if (error != null) {
                    log.error("could not publish capture record {}; it is published again after the next restore",
                            emission.key(), error);
                }
            });
        }
    }

    /** Starts materializing {@code partition}: opens its store and restores it from the checkpoint. */
    public void add(int partition) {
        CountDownLatch done = new CountDownLatch(1);
        commands.add(() -> {
            try (Timer.Context ignored = restoreTime.time()) {
                CaptureStore store = CaptureStore.open(storeDir.resolve("p" + partition));
                stores.put(partition, store);
                TopicPartition tp = new TopicPartition(topic, partition);
                java.util.Set<TopicPartition> assignment = new java.util.HashSet<>(consumer.assignment());
                assignment.add(tp);
                consumer.assign(assignment);
                long from = store.nextOffset();
                consumer.seek(tp, from);
                long end = consumer.endOffsets(List.of(tp)).get(tp);
                applied.put(partition, from);
                if (from < end) {
                    restoreEnds.put(partition, end);
                    restoring.inc();
                } else {
                    publish(store.owed());
                }
            } finally {
                done.countDown();
            }
        });
        // No wakeup(): it could land in the command's own consumer calls; the loop polls every 100 ms.
        awaitCommand(done);
    }

    /** Stops materializing {@code partition} and closes its store. */
    public void remove(int partition) {
        CountDownLatch done = new CountDownLatch(1);
        commands.add(() -> {
            try {
                TopicPartition tp = new TopicPartition(topic, partition);
                java.util.Set<TopicPartition> assignment = new java.util.HashSet<>(consumer.assignment());
                assignment.remove(tp);
                consumer.assign(assignment);
                CaptureStore store = stores.remove(partition);
                if (store != null) {
                    store.close();
                }
                if (restoreEnds.remove(partition) != null) {
                    restoring.dec();
                }
                applied.remove(partition);
            } finally {
                done.countDown();
            }
        });
        // No wakeup(): it could land in the command's own consumer calls; the loop polls every 100 ms.
        awaitCommand(done);
    }

    private void awaitCommand(CountDownLatch done) {
        try {
            if (!done.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the capture materializer did not answer within 60 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the capture materializer", e);
        }
    }

    /**
     * Waits until {@code partition} is restored and has applied every record before
     * {@code offset}.
     *
     * @return false when {@code timeout} passed first
     */
    public boolean awaitApplied(int partition, long offset, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (progress) {
            while (restoreEnds.containsKey(partition) || applied.getOrDefault(partition, -1L) < offset) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                progress.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
            return true;
        }
    }

    /**
     * The capture state of every attempt of {@code runId}, read on the materializer's thread so a
     * partition cannot be closed under the read; empty when this collector does not own the run's
     * partition (another collector does).
     */
    public Optional<SortedMap<String, AttemptState>> states(String runId, Duration timeout) {
        CompletableFuture<Optional<SortedMap<String, AttemptState>>> answer =
                new CompletableFuture<>();
        commands.add(() -> {
            try {
                int partitions = consumer.partitionsFor(topic).size();
                CaptureStore store = stores.get(RunIdPartitioner.partitionOf(runId, partitions));
                answer.complete(store == null ? Optional.empty() : Optional.of(store.states(runId)));
            } catch (RuntimeException e) {
                answer.completeExceptionally(e);
            }
        });
        try {
            return answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading capture state", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("the capture materializer did not answer: " + e, e);
        }
    }

    /** The store of a partition being materialized, for reads; null when not owned. */
    public CaptureStore store(int partition) {
        return stores.get(partition);
    }

    public void stop() {
        running = false;
        consumer.wakeup();
    }
}
