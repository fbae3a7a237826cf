package dev.rolloutfleet.collector;

import com.codahale.metrics.MetricRegistry;
import dev.rolloutfleet.collector.capture.AttemptState;
import dev.rolloutfleet.collector.capture.CaptureMaterializer;
import dev.rolloutfleet.collector.internal.ResultsConsumerLoop;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * A results collector: owns a share of {@code rollout.results} in its consumer group, writes each
 * result as one fsynced JSON line under its data directory, commits only after the fsync, and then
 * announces the line on {@code rollout.durable}. Participating results get their capture evidence
 * frozen and rebuilt into a token trajectory (or masked) first; clean evidence is retired once its
 * line is durable. One collector per data directory (a file lock
 * enforces it). {@link #start} returns at once; the work runs on a thread of its own.
 */
public final class Collector implements AutoCloseable {

    private final ResultsConsumerLoop loop;
    private final Thread thread;
    private final CaptureMaterializer materializer;
    private final Thread materializerThread;
    private final KafkaProducer<String, byte[]> producer;
    private final FileChannel lockChannel;
    private final FileLock lock;

    private Collector(ResultsConsumerLoop loop, Thread thread, CaptureMaterializer materializer, Thread materializerThread,
            KafkaProducer<String, byte[]> producer, FileChannel lockChannel, FileLock lock) {
        this.loop = loop;
        this.thread = thread;
        this.materializer = materializer;
        this.materializerThread = materializerThread;
        this.producer = producer;
        this.lockChannel = lockChannel;
        this.lock = lock;
    }

    public static Collector start(CollectorConfig config, MetricRegistry registry, CollectorListener listener) {
        FileChannel lockChannel;
        FileLock lock;
        try {
            Files.createDirectories(config.dataDir());
            lockChannel = FileChannel.open(config.dataDir().resolve(".collector.lock"),
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            lock = tryLock(lockChannel);
            if (lock == null) {
                lockChannel.close();
                throw new IllegalStateException("another collector is using " + config.dataDir()
                        + "; give each collector its own --data-dir");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot use data directory " + config.dataDir(), e);
        }
        KafkaProducer<String, byte[]> producer = config.kafka().producer(config.collectorId() + "-out");
        Map<String, Object> consumerConfig = config.kafka().consumerConfig(config.groupId(), config.collectorId());
        if (config.groupInstanceId() != null && !config.groupInstanceId().isBlank()) {
            consumerConfig.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, config.groupInstanceId());
        }
        KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(consumerConfig);
        KafkaConsumer<String, byte[]> captureConsumer = config.kafka().consumer(null, config.collectorId() + "-capture");
        CaptureMaterializer materializer = new CaptureMaterializer(captureConsumer, producer, config.topics().tokenCapture(),
                config.dataDir().resolve("capture"), config.retiredTtl(), registry, Clock.systemUTC());
        Thread materializerThread = new Thread(materializer, "collector-capture-" + config.collectorId());
        materializerThread.start();
        ResultsConsumerLoop loop = new ResultsConsumerLoop(consumer, producer, config, listener, registry, materializer);
        Thread thread = new Thread(loop, "collector-" + config.collectorId());
        thread.start();
        return new Collector(loop, thread, materializer, materializerThread, producer, lockChannel, lock);
    }

    /** Null when another process, or another collector in this JVM, holds the lock. */
    private static FileLock tryLock(FileChannel channel) throws IOException {
        try {
            return channel.tryLock();
        } catch (OverlappingFileLockException sameJvm) {
            return null;
        }
    }

    /**
     * The capture state of every attempt of {@code runId}, for the admin endpoint and
     * {@code fleet status}; empty when another collector owns the run's partition.
     */
    public Optional<SortedMap<String, AttemptState>> captureState(String runId) {
        return materializer.states(runId, Duration.ofSeconds(10));
    }

    public boolean isReady() {
        return loop.isAssigned() && thread.isAlive();
    }

    /** False when the collector stopped, or too many samples are masked; feeds {@code /healthz}. */
    public boolean isHealthy() {
        return thread.isAlive() && loop.isHealthy();
    }

    public boolean isRunning() {
        return thread.isAlive();
    }

    public void awaitTermination() throws InterruptedException {
        thread.join();
    }

    /** Stops without committing the batch in hand, as a crash would; see {@link ResultsConsumerLoop#halt()}. */
    public void halt() {
        loop.halt();
    }

    @Override
    public void close() {
        loop.stop();
        try {
            thread.join(Duration.ofSeconds(30));
            materializer.stop();
            materializerThread.join(Duration.ofSeconds(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        producer.close(Duration.ofSeconds(10));
        try {
            lock.release();
            lockChannel.close();
        } catch (IOException e) {
            // The lock dies with the channel; nothing to do.
        }
    }
}
