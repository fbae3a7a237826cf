package dev.rolloutfleet.ops;

import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.collector.Collector;
import dev.rolloutfleet.collector.CollectorConfig;
import dev.rolloutfleet.collector.CollectorListener;
import dev.rolloutfleet.common.broker.EmbeddedKafka;
import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.topics.TopicLayout;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.topics.TopicSetup;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.worker.Worker;
import dev.rolloutfleet.worker.WorkerConfig;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code fleet bench pipeline}: the whole fleet against the broker's own ceiling, in one run on
 * one embedded broker. First the fleet: a worker and a collector run scripted, zero-latency
 * rollouts in the corridor with token capture on; every record they and the submitter write
 * (requests, traces, capture entries, freezes, retires, tombstones, results, durable pointers) is
 * counted from the topics' offsets, from the first measured request until every rollout is
 * durable and its capture retired. Then the baseline: a bare producer with the fleet's producer
 * settings re-sends records sampled from that very run (same keys, sizes and bytes, so the same
 * compression) to a fresh topic, as fast as it can. {@code ratio} = fleet / raw records per second.
 */
@Command(name = "pipeline", mixinStandardHelpOptions = true,
        description = "Whole-fleet records/s (worker + collector, capture on) against a raw producer's records/s of the same records.")
final class PipelineBench implements Callable<Integer> {

    @Option(names = "--rollouts", defaultValue = "3000", description = "Measured rollouts (default ${DEFAULT-VALUE}).")
    int rollouts;

    @Option(names = "--warmup", defaultValue = "1000", description = "Rollouts run before measuring (default ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--steps", defaultValue = "6", description = "Corridor steps per rollout at most (default ${DEFAULT-VALUE}).")
    int steps;

    @Option(names = "--partitions", defaultValue = "6", description = "Partitions per topic (default ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--max-inflight", defaultValue = "256", description = "Worker in-flight limit (default ${DEFAULT-VALUE}).")
    int maxInflight;

    @Option(names = "--capture", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Token capture on (default ${DEFAULT-VALUE}); --no-capture measures the fleet without it.")
    boolean capture;

    /** Distinct record values kept per topic for the baseline; it cycles through them. */
    private static final int SAMPLES_PER_TOPIC = 4096;

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        PrintStream log = System.err;
        Path data = Files.createTempDirectory("bench-pipeline-");
        try (EmbeddedKafka broker = EmbeddedKafka.start()) {
            KafkaConnection kafka = KafkaConnection.of(broker.bootstrapServers());
            TopicNames topics = TopicNames.defaults();
            try (Admin admin = kafka.admin()) {
                new TopicSetup(admin).ensure(TopicLayout.of(topics, partitions, (short) 1));
                admin.createTopics(List.of(new NewTopic("bench.raw", partitions, (short) 1))).all().get();
            }
            MetricRegistry registry = new MetricRegistry();
            Meter retired = registry.meter("collector.capture.retired");
            Meter written = registry.meter("collector.lines.written");
            double fleetSeconds;
            long cpuBefore;
            long brokerBefore;
            double fleetCpuMs;
            double brokerCpuMs;
            Map<TopicPartition, Long> before;
            Map<TopicPartition, Long> after;
            try (KafkaProducer<String, byte[]> producer = kafka.producer("bench-submit");
                    Worker ignored = Worker.start(WorkerConfig.builder(kafka, topics, "bench-worker").maxInflight(maxInflight).build(), registry);
                    Collector alsoIgnored = Collector.start(CollectorConfig.defaults(kafka, topics, "bench-collector", data),
                            registry, CollectorListener.NONE)) {
                log.printf(Locale.ROOT, "warm-up: %d rollouts%n", warmup);
                submit(producer, topics, "warmup", warmup);
                awaitDone(written, retired, warmup, log);
                before = ends(kafka, topics.all());
                long start = System.nanoTime();
                cpuBefore = WorkerBench.processCpu();
                brokerBefore = WorkerBench.brokerCpu(broker);
                log.printf(Locale.ROOT, "measuring the fleet: %d rollouts, capture on%n", rollouts);
                submit(producer, topics, "bench", rollouts);
                awaitDone(written, retired, warmup + rollouts, log);
                fleetSeconds = (System.nanoTime() - start) / 1e9;
                fleetCpuMs = (WorkerBench.processCpu() - cpuBefore) / 1e6 / rollouts;
                brokerCpuMs = (WorkerBench.brokerCpu(broker) - brokerBefore) / 1e6 / rollouts;
                after = ends(kafka, topics.all());
            }
            registry.getTimers().forEach((name, t) -> log.printf(Locale.ROOT, "  %-40s n=%d mean %.1f ms p99 %.1f ms%n", name,
                    t.getCount(), t.getSnapshot().getMean() / 1e6, t.getSnapshot().get99thPercentile() / 1e6));
            registry.getHistograms().forEach((name, h) -> log.printf(Locale.ROOT, "  %-40s n=%d mean %.1f max %d%n", name,
                    h.getCount(), h.getSnapshot().getMean(), h.getSnapshot().getMax()));
            long fleetRecords = 0;
            Map<String, Long> perTopic = new HashMap<>();
            for (Map.Entry<TopicPartition, Long> e : after.entrySet()) {
                long n = e.getValue() - before.getOrDefault(e.getKey(), 0L);
                fleetRecords += n;
                perTopic.merge(e.getKey().topic(), n, Long::sum);
            }
            log.printf(Locale.ROOT, "fleet wrote %d records in %.1f s: %s%n", fleetRecords, fleetSeconds, perTopic);

            List<ProducerRecord<String, byte[]>> baseline = sampleRecords(kafka, before, after, perTopic);
            log.printf(Locale.ROOT, "measuring a raw producer: %d records of the same keys and bytes, 3 rounds%n", baseline.size());
            double rawSeconds = rawProducer(kafka, baseline);
            double fleetPerSecond = fleetRecords / fleetSeconds;
            double rawPerSecond = baseline.size() / rawSeconds;
            ObjectNode summary = Json.object().put("rollouts", rollouts).put("records_per_rollout", Math.round(fleetRecords * 10.0 / rollouts) / 10.0)
                    .put("fleet_records_per_s", Math.round(fleetPerSecond)).put("raw_records_per_s", Math.round(rawPerSecond))
                    .put("ratio", Math.round(fleetPerSecond / rawPerSecond * 1000) / 1000.0)
                    .put("rollouts_per_s", Math.round(rollouts / fleetSeconds * 10) / 10.0)
                    .put("cores", Runtime.getRuntime().availableProcessors())
                    .put("fleet_cpu_ms_per_rollout", Math.round(fleetCpuMs * 100) / 100.0)
                    .put("broker_cpu_ms_per_rollout", Math.round(brokerCpuMs * 100) / 100.0);
            out.println(Json.encodeToString(summary));
            return 0;
        } finally {
            Services.deleteTree(data);
        }
    }

    private void submit(KafkaProducer<String, byte[]> producer, TopicNames topics, String prefix, int count) {
        for (int i = 0; i < count; i++) {
            RolloutRequest request = DemoCommand.demoRequest(prefix + "-" + i, i);
            request.env().config().with("env_params").put("max_steps_per_episode", steps);
            request.policy().config().put("epsilon", 0.3);
            if (capture) {
                request.policy().config().putObject("token_id_capture").put("enabled", true).put("all_agents", true);
            }
            producer.send(new ProducerRecord<>(topics.requests(), request.kafkaKey(), Json.encode(request)));
        }
        producer.flush();
    }

    /** Durable and retired: the rollout has left nothing behind but its line and its pointer. */
    private void awaitDone(Meter written, Meter retired, long target, PrintStream log) throws InterruptedException {
        long nextReport = System.nanoTime();
        while (written.getCount() < target || (capture && retired.getCount() < target)) {
            Thread.sleep(1);
            if (System.nanoTime() >= nextReport) {
                log.printf(Locale.ROOT, "  durable %d, retired %d of %d%n", written.getCount(), retired.getCount(), target);
                nextReport += 1_000_000_000L;
            }
        }
    }

    private static Map<TopicPartition, Long> ends(KafkaConnection kafka, List<String> topics) {
        try (KafkaConsumer<String, byte[]> consumer = kafka.consumer(null, "bench-offsets")) {
            List<TopicPartition> all = new ArrayList<>();
            topics.forEach(t -> all.addAll(TopicSlice.partitions(consumer, t)));
            return consumer.endOffsets(all);
        }
    }

    /** Per topic, as many records as the fleet wrote there, cycling through up to SAMPLES_PER_TOPIC of its real records. */
    private static List<ProducerRecord<String, byte[]>> sampleRecords(KafkaConnection kafka, Map<TopicPartition, Long> before,
            Map<TopicPartition, Long> after, Map<String, Long> perTopic) {
        Map<String, List<ConsumerRecord<String, byte[]>>> samples = new HashMap<>();
        try (KafkaConsumer<String, byte[]> consumer = kafka.consumer(null, "bench-sample")) {
            for (String topic : perTopic.keySet()) {
                Map<Integer, Long> from = new HashMap<>();
                Map<Integer, Long> to = new HashMap<>();
                after.forEach((tp, end) -> {
                    if (tp.topic().equals(topic)) {
                        from.put(tp.partition(), before.getOrDefault(tp, 0L));
                        to.put(tp.partition(), end);
                    }
                });
                List<ConsumerRecord<String, byte[]>> kept = new ArrayList<>();
                new TopicSlice(topic, from, to).read(consumer, r -> {
                    if (kept.size() < SAMPLES_PER_TOPIC) {
                        kept.add(r);
                    }
                });
                samples.put(topic, kept);
            }
        }
        List<ProducerRecord<String, byte[]>> records = new ArrayList<>();
        perTopic.forEach((topic, count) -> {
            List<ConsumerRecord<String, byte[]>> kept = samples.get(topic);
            for (long i = 0; i < count && !kept.isEmpty(); i++) {
                ConsumerRecord<String, byte[]> r = kept.get((int) (i % kept.size()));
                records.add(new ProducerRecord<>("bench.raw", r.key() == null ? "none" : r.key(), r.value()));
            }
        });
        Collections.shuffle(records, new Random(7));
        return records;
    }

    /** Median seconds of three rounds of sending every record (after a warm-up pass over a tenth): one round is noisy. */
    private static double rawProducer(KafkaConnection kafka, List<ProducerRecord<String, byte[]>> records) throws Exception {
        try (KafkaProducer<String, byte[]> producer = kafka.producer("bench-raw")) {
            records.subList(0, records.size() / 10).forEach(producer::send);
            producer.flush();
            double[] rounds = new double[3];
            for (int r = 0; r < rounds.length; r++) {
                long start = System.nanoTime();
                records.forEach(producer::send);
                producer.flush();
                rounds[r] = (System.nanoTime() - start) / 1e9;
            }
            Arrays.sort(rounds);
            return rounds[1];
        }
    }
}
