package dev.rolloutfleet.collector.internal;

import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import dev.rolloutfleet.collector.CollectorConfig;
import dev.rolloutfleet.collector.CollectorListener;
import dev.rolloutfleet.collector.sink.PartitionSegments;
import dev.rolloutfleet.common.wire.DurablePointer;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.common.wire.WireFormatException;
import java.io.IOException;
import java.io.UncheckedIOException;
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
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The collector's consumer thread. Per poll: append each new result as one line to its
 * partition's segments, fsync every touched segment once (group commit), then commit the offsets,
 * then announce each line on the durable topic. A crash anywhere before the commit re-delivers
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
    private Quarantine quarantine;
    private volatile boolean running = true;
    private volatile boolean halted;
    private volatile boolean assigned;

    public ResultsConsumerLoop(Consumer<String, byte[]> consumer, Producer<String, byte[]> producer,
            CollectorConfig config, CollectorListener listener, MetricRegistry registry) {
        this.consumer = consumer;
        this.producer = producer;
        this.config = config;
        this.listener = listener;
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
            consumer.subscribe(List.of(config.topics().results()), new Rebalance());
            while (running) {
                ConsumerRecords<String, byte[]> records = consumer.poll(config.pollTimeout());
                if (!records.isEmpty()) {
                    writeDurably(records);
                }
            }
        } catch (WakeupException e) {
            if (running) {
                throw e;
            }
        } catch (IOException e) {
            log.error("the collector cannot write to {}; stopping without committing", config.dataDir(), e);
        } finally {
            closeAll();
            consumer.close();
        }
    }

    private void writeDurably(ConsumerRecords<String, byte[]> records) throws IOException {
        Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
        Set<PartitionSegments> touched = new HashSet<>();
        List<DurablePointer> pointers = new ArrayList<>();
        for (ConsumerRecord<String, byte[]> record : records) {
            commits.put(new TopicPartition(record.topic(), record.partition()), new OffsetAndMetadata(record.offset() + 1));
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
            PartitionSegments partition = segmentsOf(record.partition());
            if (partition.contains(result.runId())) {
                duplicates.mark();
                continue;
            }
            PartitionSegments.Position position = partition.append(result.runId(), Json.encode(result));
            touched.add(partition);
            pointers.add(new DurablePointer(SchemaVersion.CURRENT, result.runId(), result.attempt(), result.status(),
                    position.file().toAbsolutePath().toString(), position.byteOffset(), record.partition(), record.offset(),
                    false, null, config.collectorId(), null));
        }
        try (Timer.Context ignored = fsyncTimer.time()) {
            for (PartitionSegments partition : touched) {
                partition.sync();
            }
            quarantine.sync();
        }
        linesWritten.mark(pointers.size());
        batchLines.update(pointers.size());
        notify(() -> listener.batchSynced(pointers.size()));
        if (halted) {
            return;
        }
        consumer.commitSync(commits);
        notify(() -> listener.batchCommitted(pointers.size()));
        for (DurablePointer pointer : pointers) {
            producer.send(new ProducerRecord<>(config.topics().durable(), pointer.runId(), Json.encode(pointer)));
        }
    }

    private PartitionSegments segmentsOf(int partition) throws IOException {
        PartitionSegments existing = segments.get(partition);
        if (existing != null) {
            return existing;
        }
        PartitionSegments opened = PartitionSegments.open(config.dataDir(), partition, config.maxSegmentBytes());
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
            }
            assigned = !consumer.assignment().isEmpty();
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            for (TopicPartition tp : partitions) {
                PartitionSegments removed = segments.remove(tp.partition());
                if (removed != null) {
                    closeQuietly(removed);
                }
            }
            assigned = !consumer.assignment().isEmpty();
        }
    }
}
