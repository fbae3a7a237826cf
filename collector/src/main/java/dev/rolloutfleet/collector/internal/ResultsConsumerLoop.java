package dev.rolloutfleet.collector.internal;

import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import dev.rolloutfleet.collector.CollectorConfig;
import dev.rolloutfleet.collector.CollectorListener;
import dev.rolloutfleet.collector.capture.CaptureMaterializer;
import dev.rolloutfleet.collector.sink.DedupeIndex;
import dev.rolloutfleet.collector.sink.PartitionSegments;
import dev.rolloutfleet.common.wire.DurablePointer;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.common.wire.WireFormatException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The collector's consumer thread. Records are gathered over polls until the batch reaches the
 * group-commit size or age; then each new result is appended as one line to its partition's
 * segments, every touched segment is fsynced once, the offsets are committed, each line is
 * announced on the durable topic, and clean capture evidence is retired. A crash anywhere before the commit re-delivers
 * the batch, and the segments' run-id index keeps the re-delivered results from being written
 * twice. The only thread that touches the consumer and the segments; {@link #stop()} and
 * {@link #halt()} may be called from any thread.
 */
public final class ResultsConsumerLoop implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(ResultsConsumerLoop.class);

    private final Consumer<String, byte[]> consumer;
    private final Producer<String, byte[]> producer;
    private final CollectorConfig config;
    private final CollectorListener listener;
    private final Map<Integer, PartitionSegments> segments = new HashMap<>();
    private final Meter linesWritten;
    private final Meter duplicates;
    private final Meter rejected;
    private final Timer fsyncTimer;
    private final Histogram batchLines;
    private final Meter resultsIn;
    private final MetricRegistry registry;
    private final CaptureMaterializer materializer;
    private final CaptureBuilds builds;
    private Quarantine quarantine;
    private DedupeIndex dedupe;
    private final List<ConsumerRecord<String, byte[]>> pending = new ArrayList<>();
    private long pendingBytes;
    private long pendingSince;
    private final MaskGuard maskGuard;
    private boolean stoppedByMaskLimit;
    private volatile boolean running = true;
    private volatile boolean halted;
    private volatile boolean assigned;

    public ResultsConsumerLoop(Consumer<String, byte[]> consumer, Producer<String, byte[]> producer,
            CollectorConfig config, CollectorListener listener, MetricRegistry registry, CaptureMaterializer materializer) {
        this.consumer = consumer;
        this.producer = producer;
        this.config = config;
        this.listener = listener;
        this.registry = registry;
        this.materializer = materializer;
        this.builds = new CaptureBuilds(materializer, producer, config.topics().tokenCapture(), config.collectorId(),
                config.captureWait(), registry, Clock.systemUTC());
        this.resultsIn = registry.meter("collector.results.in");
        this.maskGuard = new MaskGuard(config.maskLimit());
        this.linesWritten = registry.meter("collector.lines.written");
        this.duplicates = registry.meter("collector.results.duplicate");
        this.rejected = registry.meter("collector.results.rejected");
        this.fsyncTimer = registry.timer("collector.fsync");
        this.batchLines = registry.histogram("collector.batch.lines");
    }

    @Override
    public void run() {
        try {
            quarantine = new Quarantine(config.dataDir());
            dedupe = DedupeIndex.open(config.dataDir().resolve("dedupe"));
            consumer.subscribe(List.of(config.topics().results()), new Rebalance());
            while (running) {
                // Group commit: gather records over polls until the batch is big or old enough, then
                // write, fsync and commit them together.
                Duration wait = pending.isEmpty() ? config.pollTimeout()
                        : Duration.ofNanos(Math.max(0, pendingSince + config.groupCommit().maxDelay().toNanos() - System.nanoTime()));
                for (ConsumerRecord<String, byte[]> record : consumer.poll(wait)) {
                    if (pending.isEmpty()) {
                        pendingSince = System.nanoTime();
                    }
                    pending.add(record);
                    pendingBytes += record.serializedValueSize();
                }
                if (!pending.isEmpty() && (pendingBytes >= config.groupCommit().maxBytes()
                        || System.nanoTime() - pendingSince >= config.groupCommit().maxDelay().toNanos())) {
                    flushPending();
                }
            }
        } catch (WakeupException e) {
            if (running) {
                throw e;
            }
        } catch (IOException e) {
            log.error("the collector cannot write to {}; stopping without committing", config.dataDir(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeAll();
            consumer.close();
        }
    }

    private void flushPending() throws IOException, InterruptedException {
        List<ConsumerRecord<String, byte[]>> batch = new ArrayList<>(pending);
        pending.clear();
        pendingBytes = 0;
        writeDurably(batch);
    }

    private void writeDurably(List<ConsumerRecord<String, byte[]>> records) throws IOException, InterruptedException {
        Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
        List<ConsumerRecord<String, byte[]>> fresh = new ArrayList<>();
        List<RolloutResult> freshResults = new ArrayList<>();
        List<CaptureBuilds.Pending> toBuild = new ArrayList<>();
        List<CaptureBuilds.Pending> redundant = new ArrayList<>();
        Set<String> inBatch = new HashSet<>();
        for (ConsumerRecord<String, byte[]> record : records) {
            commits.put(new TopicPartition(record.topic(), record.partition()), new OffsetAndMetadata(record.offset() + 1));
            resultsIn.mark();
            RolloutResult result;
            try {
                result = Json.decode(record.value(), RolloutResult.class);
                if (result.runId() == null || result.runId().isEmpty()) {
                    throw new WireFormatException("missing_run_id", "the result has no run_id");
                }
            } catch (WireFormatException e) {
                log.warn("result at {}-{}@{} cannot be read ({}); kept in rejected-results.jsonl",
                        record.topic(), record.partition(), record.offset(), e.getMessage());
                rejected.mark();
                quarantine.add(record.topic(), record.partition(), record.offset(), record.key(), record.value(),
                        e.code(), e.getMessage());
                continue;
            }
            boolean participating = result.capture() != null && Boolean.TRUE.equals(result.capture().participating())
                    && result.attempt() != null;
            if (segmentsOf(record.partition()).contains(result.runId()) || !inBatch.add(result.runId())) {
                duplicates.mark();
                if (participating) {
                    // Already durable: this attempt's evidence is redundant; once frozen it is retired if clean.
                    redundant.add(new CaptureBuilds.Pending(result, record.partition()));
                }
                continue;
            }
            fresh.add(record);
            freshResults.add(result);
            if (participating) {
                toBuild.add(new CaptureBuilds.Pending(result, record.partition()));
            }
        }
        try {
            builds.freezeAndBuild(toBuild);
            // Redundant evidence is rebuilt too: it is retired only if it is clean, like any other.
            builds.freezeAndBuild(redundant);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IOException("could not freeze capture evidence: " + e.getCause(), e.getCause());
        }
        Map<String, CaptureBuilds.Pending> builtByRun = new HashMap<>();
        for (CaptureBuilds.Pending p : toBuild) {
            builtByRun.put(p.result.runId(), p);
            if (maskGuard.record(p.built) && config.maskLimit().stopConsuming()) {
                stoppedByMaskLimit = true;
            }
        }

        Set<PartitionSegments> touched = new HashSet<>();
        List<DurablePointer> pointers = new ArrayList<>();
        List<String> written = new ArrayList<>();
        for (int i = 0; i < fresh.size(); i++) {
            ConsumerRecord<String, byte[]> record = fresh.get(i);
            RolloutResult result = freshResults.get(i);
            CaptureBuilds.Pending build = builtByRun.get(result.runId());
            byte[] line = build == null ? Json.encode(result) : DurableLine.withTrajectory(result, build);
            PartitionSegments partition = segmentsOf(record.partition());
            PartitionSegments.Position position = partition.append(result.runId(), line);
            touched.add(partition);
            written.add(result.runId());
            boolean masked = build != null && build.built.masked();
            if (masked) {
                registry.meter("collector.masked." + build.built.maskReason()).mark();
            }
            pointers.add(new DurablePointer(SchemaVersion.CURRENT, result.runId(), result.attempt(), result.status(),
                    position.file().toAbsolutePath().toString(), position.byteOffset(), record.partition(), record.offset(),
                    masked, masked ? build.built.maskReason() : null, config.collectorId(), null));
        }
        try (Timer.Context ignored = fsyncTimer.time()) {
            for (PartitionSegments partition : touched) {
                partition.sync();
            }
            quarantine.sync();
        }
        linesWritten.mark(pointers.size());
        batchLines.update(pointers.size());
        notify(() -> listener.batchSynced(written));
        if (halted) {
            return;
        }
        consumer.commitSync(commits);
        notify(() -> listener.batchCommitted(written));
        for (DurablePointer pointer : pointers) {
            producer.send(new ProducerRecord<>(config.topics().durable(), pointer.runId(), Json.encode(pointer)));
        }
        // Retire only what is on disk and clean: a clean rollout's build, or redundant evidence.
        List<String> retiredRuns = new ArrayList<>();
        for (CaptureBuilds.Pending p : toBuild) {
            if (p.result.status() == RolloutStatus.OK && CaptureBuilds.retirable(p)) {
                builds.retire(p);
                retiredRuns.add(p.result.runId());
            }
        }
        for (CaptureBuilds.Pending p : redundant) {
            if (p.result.status() == RolloutStatus.OK && CaptureBuilds.retirable(p)) {
                builds.retire(p);
                retiredRuns.add(p.result.runId());
            }
        }
        if (!retiredRuns.isEmpty()) {
            producer.flush();
            notify(() -> listener.retiresPublished(retiredRuns));
        }
        if (stoppedByMaskLimit) {
            // Keep the group membership (and the partitions) but read nothing more until an operator acts.
            consumer.pause(consumer.assignment());
        }
    }

    /** False once too many participating samples were masked (see {@link MaskGuard}). */
    public boolean isHealthy() {
        return !maskGuard.tripped();
    }

    private PartitionSegments segmentsOf(int partition) throws IOException {
        PartitionSegments existing = segments.get(partition);
        if (existing != null) {
            return existing;
        }
        PartitionSegments opened = PartitionSegments.open(config.dataDir(), partition, config.maxSegmentBytes(), dedupe);
        segments.put(partition, opened);
        return opened;
    }

    private void notify(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            log.warn("a collector listener failed; the collector goes on", e);
        }
    }

    private void closeAll() {
        for (PartitionSegments partition : segments.values()) {
            closeQuietly(partition);
        }
        segments.clear();
        if (quarantine != null) {
            try {
                quarantine.close();
            } catch (IOException e) {
                log.warn("cannot close the quarantine file", e);
            }
        }
        if (dedupe != null) {
            dedupe.close();
            dedupe = null;
        }
    }

    private static void closeQuietly(PartitionSegments partition) {
        try {
            partition.close();
        } catch (IOException e) {
            log.warn("cannot close the segments of partition {}", partition.partition(), e);
        }
    }

    public boolean isAssigned() {
        return assigned;
    }

    public void stop() {
        running = false;
        consumer.wakeup();
    }

    /**
     * Stops at once, without committing the batch in hand: what a crash between fsync and commit
     * leaves behind. The next owner of the partitions re-reads that batch and must not write it twice.
     */
    public void halt() {
        halted = true;
        stop();
    }

    /** Opens a partition's segments when it is assigned and closes them when it leaves. */
    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            for (TopicPartition tp : partitions) {
                try {
                    segmentsOf(tp.partition());
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot open the segments of partition " + tp.partition(), e);
                }
                // The same-numbered capture partition holds this partition's runs' evidence.
                materializer.add(tp.partition());
            }
            if (stoppedByMaskLimit) {
                consumer.pause(partitions);
            }
            assigned = !consumer.assignment().isEmpty();
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            // What was gathered is written and committed before the partitions go.
            if (!pending.isEmpty() && !halted) {
                try {
                    flushPending();
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot write the pending batch before a rebalance", e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            for (TopicPartition tp : partitions) {
                PartitionSegments removed = segments.remove(tp.partition());
                if (removed != null) {
                    closeQuietly(removed);
                }
                materializer.remove(tp.partition());
            }
            assigned = !consumer.assignment().isEmpty();
        }
    }
}
