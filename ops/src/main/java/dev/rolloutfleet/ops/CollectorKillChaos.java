package dev.rolloutfleet.ops;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.broker.EmbeddedKafka;
import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.topics.TopicLayout;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.topics.TopicSetup;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.ops.FakeCaptureWorker.Shape;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code fleet chaos collector-kill}: SIGKILLs collectors at random moments while results and
 * capture evidence stream in, and checks guarantees 1, 2, 5 and 6 for collectors.
 *
 * <p>An embedded broker; a fake worker in this process publishing participating rollouts (most
 * clean, the rest drifted, missing or incomplete); collector child JVMs, each with its own data
 * directory and a stable group instance id (a restart gets its partitions back). A monitor tails
 * the capture topic and, the moment a retire request appears, checks that the run's line is
 * already in a segment file: a retire seen before its line is <em>premature</em>. At the end:
 * every run durable exactly once, every clean build retired, every masked one's evidence kept.
 */
@Command(name = "collector-kill", mixinStandardHelpOptions = true,
        description = "SIGKILL collectors mid-run; exit 0 only if nothing is lost or duplicated and only clean, durable evidence is retired.")
final class CollectorKillChaos implements Callable<Integer> {

    private static final String GROUP = "chaos-collectors";

    @Option(names = "--rollouts", defaultValue = "1000", description = "Rollouts to publish (default ${DEFAULT-VALUE}).")
    int rollouts;

    @Option(names = "--kills", defaultValue = "3", description = "Collectors to SIGKILL, one at a time (default ${DEFAULT-VALUE}).")
    int kills;

    @Option(names = "--collectors", defaultValue = "2", description = "Collector processes (default ${DEFAULT-VALUE}).")
    int collectors;

    @Option(names = "--rate", defaultValue = "100", description = "Rollouts published per second (default ${DEFAULT-VALUE}).")
    int rate;

    @Option(names = "--partitions", defaultValue = "6", description = "Partitions per topic (default ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of shapes, kill times and victims (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--timeout", defaultValue = "PT10M", description = "Give up after this long, ISO-8601 (default ${DEFAULT-VALUE}).")
    Duration timeout;

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        PrintStream log = System.err;
        Path workDir = Files.createTempDirectory("fleet-chaos-collector-");
        Random random = new Random(seed);
        ObjectNode summary;
        try (EmbeddedKafka broker = EmbeddedKafka.start(workDir.resolve("broker"), false)) {
            KafkaConnection kafka = KafkaConnection.of(broker.bootstrapServers());
            TopicNames topics = TopicNames.defaults();
            try (Admin admin = kafka.admin()) {
                new TopicSetup(admin).ensure(TopicLayout.of(topics, partitions, (short) 1));
            }
            List<Path> dataDirs = new ArrayList<>();
            List<FleetChild> slots = new ArrayList<>();
            for (int i = 0; i < collectors; i++) {
                dataDirs.add(workDir.resolve("collector-" + i));
                int slot = i;
                // A stable group instance id and data directory per slot: a restart gets its partitions back.
                slots.add(FleetChild.start("collector-" + slot, workDir, incarnation -> List.of("collector",
                        "--bootstrap-servers", broker.bootstrapServers(), "--group-id", GROUP,
                        "--collector-id", "c" + slot + "-" + incarnation, "--group-instance-id", "chaos-collector-" + slot,
                        "--data-dir", dataDirs.get(slot).toString(), "--metrics-port", "-1")));
            }
            DurableFileIndex files = new DurableFileIndex(dataDirs);
            RetireMonitor monitor = new RetireMonitor(kafka, topics.tokenCapture(), files);
            Thread monitorThread = Thread.ofPlatform().daemon().name("retire-monitor").start(monitor);
            Map<String, Shape> shapes = new LinkedHashMap<>();
            try {
                // Kill at random moments spread over the run: after a random number of published rollouts.
                List<Integer> killAfter = new ArrayList<>();
                for (int k = 0; k < kills; k++) {
                    killAfter.add(rollouts / 10 + random.nextInt(Math.max(1, rollouts * 8 / 10)));
                }
                killAfter.sort(null);
                long start = System.currentTimeMillis();
                Map<String, Object> producerConfig = kafka.producerConfig("chaos-fake-worker");
                producerConfig.put(org.apache.kafka.clients.producer.ProducerConfig.LINGER_MS_CONFIG, 1);
                try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(producerConfig)) {
                    FakeCaptureWorker worker = new FakeCaptureWorker(producer, topics);
                    int killed = 0;
                    for (int i = 0; i < rollouts; i++) {
                        double pick = random.nextDouble();
                        Shape shape = pick < 0.7 ? Shape.CLEAN : pick < 0.8 ? Shape.DRIFTED : pick < 0.9 ? Shape.MISSING
                                : Shape.INCOMPLETE;
                        String runId = "cc-" + i;
                        worker.publish(runId, "a" + i, shape);
                        shapes.put(runId, shape);
                        long due = start + (long) i * 1000 / rate;
                        long wait = due - System.currentTimeMillis();
                        if (wait > 0) {
                            Thread.sleep(wait);
                        }
                        while (killed < killAfter.size() && i + 1 >= killAfter.get(killed)) {
                            int victim = random.nextInt(slots.size());
                            slots.get(victim).kill();
                            log.printf(Locale.ROOT, "  SIGKILLed collector %d after %d rollouts; restarting it%n", victim, i + 1);
                            slots.get(victim).restart();
                            killed++;
                        }
                    }
                    producer.flush();
                }
                log.printf(Locale.ROOT, "published %d rollouts; waiting until every one is durable ...%n", rollouts);
                long cleanCount = shapes.values().stream().filter(s -> s == Shape.CLEAN).count();
                long deadline = System.nanoTime() + timeout.toNanos();
                while (System.nanoTime() < deadline
                        && (files.runIds().size() < rollouts || monitor.retiredRuns().size() < cleanCount)) {
                    Thread.sleep(500);
                }
                // Let late retires and markers land before judging.
                Thread.sleep(2000);
            } finally {
                slots.forEach(FleetChild::stop);
                monitor.stop();
                monitorThread.join(10_000);
            }
            summary = judge(shapes, files, monitor);
        }
        boolean held = summary.get("lost").asInt() == 0 && summary.get("duplicate_lines").asInt() == 0
                && summary.get("premature_retires").asInt() == 0
                && summary.get("retired").asInt() == summary.get("clean").asInt()
                && summary.get("masked_retained").asInt() == summary.get("masked").asInt();
        if (!held) {
            log.println("the guarantees did not hold; logs and data are in " + workDir);
        }
        out.println(Json.encodeToString(summary));
        return held ? 0 : 1;
    }

    private ObjectNode judge(Map<String, Shape> shapes, DurableFileIndex files, RetireMonitor monitor) throws IOException {
        Set<String> durable = files.runIds();
        Set<String> retired = monitor.retiredRuns();
        int clean = 0;
        int cleanRetired = 0;
        int masked = 0;
        int maskedRetained = 0;
        for (Map.Entry<String, Shape> e : shapes.entrySet()) {
            if (e.getValue() == Shape.CLEAN) {
                clean++;
                cleanRetired += retired.contains(e.getKey()) ? 1 : 0;
            } else {
                masked++;
                maskedRetained += retired.contains(e.getKey()) ? 0 : 1;
            }
        }
        Set<String> lost = new HashSet<>(shapes.keySet());
        lost.removeAll(durable);
        return Json.object().put("submitted", shapes.size()).put("durable_run_ids", durable.size())
                .put("lost", lost.size()).put("duplicate_lines", files.duplicateLines())
                .put("premature_retires", monitor.premature()).put("clean", clean).put("retired", cleanRetired)
                .put("masked", masked).put("masked_retained", maskedRetained).put("kills", kills);
    }

    /** Tails the capture topic: checks each retire request against the files, collects retired markers. */
    private static final class RetireMonitor implements Runnable {
        private final KafkaConnection kafka;
        private final String topic;
        private final DurableFileIndex files;
        private final Set<String> retired = ConcurrentHashMap.newKeySet();
        private final AtomicInteger premature = new AtomicInteger();
        private volatile boolean running = true;

        RetireMonitor(KafkaConnection kafka, String topic, DurableFileIndex files) {
            this.kafka = kafka;
            this.topic = topic;
            this.files = files;
        }

        @Override
        public void run() {
            try (KafkaConsumer<String, byte[]> consumer = kafka.consumer(null, "chaos-retire-monitor")) {
                List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                        .map(p -> new TopicPartition(topic, p.partition())).toList();
                consumer.assign(partitions);
                consumer.seekToBeginning(partitions);
                while (running) {
                    for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                        if (record.value() == null || record.key() == null) {
                            continue;
                        }
                        String runId = record.key().substring(0, record.key().indexOf('/'));
                        if (record.key().endsWith("/!retire") && !files.contains(runId)) {
                            premature.incrementAndGet();
                            System.err.println("PREMATURE retire for " + runId + ": its line is in no segment file");
                        } else if (record.key().endsWith("/!retired")) {
                            retired.add(runId);
                        }
                    }
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        Set<String> retiredRuns() {
            return Set.copyOf(retired);
        }

        int premature() {
            return premature.get();
        }

        void stop() {
            running = false;
        }
    }
}
