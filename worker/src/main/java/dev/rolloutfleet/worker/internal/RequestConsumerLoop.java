package dev.rolloutfleet.worker.internal;

import com.codahale.metrics.MetricRegistry;
import dev.rolloutfleet.worker.WorkerConfig;
import dev.rolloutfleet.worker.rollout.RolloutRunner;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's consumer thread: polls requests, handles each record, waits until all outputs of
 * the batch are acknowledged by the broker, and only then commits the batch's offsets. The only
 * thread that touches the consumer; {@link #stop()} may be called from any thread.
 */
public final class RequestConsumerLoop implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(RequestConsumerLoop.class);

    private final Consumer<String, byte[]> consumer;
    private final WorkerConfig config;
    private final RequestHandler handler;
    private volatile boolean running = true;
    private volatile boolean assigned;

    public RequestConsumerLoop(Consumer<String, byte[]> consumer, Producer<String, byte[]> producer, WorkerConfig config,
            RolloutRunner runner, MetricRegistry registry, Clock clock) {
        this.consumer = consumer;
        this.config = config;
        this.handler = new RequestHandler(producer, config.topics(), config.workerId(), config.maxRequestBytes(), runner,
                new WorkerMetrics(registry), clock);
    }

    @Override
    public void run() {
        try {
            consumer.subscribe(List.of(config.topics().requests()));
            while (running) {
                ConsumerRecords<String, byte[]> records = consumer.poll(config.pollTimeout());
                assigned = !consumer.assignment().isEmpty();
                if (records.isEmpty()) {
                    continue;
                }
                Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
                List<AttemptOutputs> batch = new java.util.ArrayList<>();
                for (ConsumerRecord<String, byte[]> record : records) {
                    batch.add(handler.handle(record));
                    commits.put(new TopicPartition(record.topic(), record.partition()), new OffsetAndMetadata(record.offset() + 1));
                }
                for (AttemptOutputs outputs : batch) {
                    outputs.awaitAcknowledged();
                }
                consumer.commitSync(commits);
            }
        } catch (WakeupException e) {
            if (running) {
                throw e;
            }
        } catch (ExecutionException e) {
            log.error("an output could not be published; stopping without committing so the requests run again", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            consumer.close();
        }
    }

    /** True once the group has given this worker at least one partition. */
    public boolean isAssigned() {
        return assigned;
    }

    public void stop() {
        running = false;
        consumer.wakeup();
    }
}
