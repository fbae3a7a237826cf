package dev.rolloutfleet.common.broker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real single-node Kafka broker (KRaft, combined broker and controller) in a child JVM, started
 * from the {@code kafka_2.13} artifact on this JVM's classpath. Listens on free ports of
 * 127.0.0.1. {@link #close()} stops it; a JVM shutdown hook stops it if the caller does not; and
 * the child exits on its own if this JVM dies without running hooks (see
 * {@link BrokerProcessMain}). Not thread-safe to start and close concurrently.
 */
public final class EmbeddedKafka implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EmbeddedKafka.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(20);

    private final Process process;
    private final Path workDir;
    private final boolean deleteOnClose;
    private final String bootstrapServers;
    private final Thread shutdownHook;
    private boolean closed;

    private EmbeddedKafka(Process process, Path workDir, boolean deleteOnClose, String bootstrapServers) {
        this.process = process;
        this.workDir = workDir;
        this.deleteOnClose = deleteOnClose;
        this.bootstrapServers = bootstrapServers;
        this.shutdownHook = new Thread(this::stopProcess, "embedded-kafka-stop");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** Starts a broker whose data lives in a temporary directory removed on close. */
    public static EmbeddedKafka start() {
        try {
            return start(Files.createTempDirectory("embedded-kafka-"), true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary directory for the embedded broker", e);
        }
    }

    /**
     * Starts a broker whose data and log ({@code broker.log}) live under {@code workDir}.
     *
     * @throws IllegalStateException when the broker jars are missing or the broker does not come up;
     *     the message includes the end of the broker's log
     */
    public static EmbeddedKafka start(Path workDir, boolean deleteOnClose) {
        if (EmbeddedKafka.class.getClassLoader().getResource("kafka/Kafka.class") == null) {
            throw new IllegalStateException("the Kafka broker jars (org.apache.kafka:kafka_2.13) are not on the"
                    + " classpath; run the embedded broker through the fleet launcher (./fleet), or add kafka_2.13"
                    + " as a test dependency, or point KAFKA_BOOTSTRAP_SERVERS at a running cluster");
        }
        try {
            Files.createDirectories(workDir);
            int brokerPort = freePort();
            int controllerPort = freePort();
            Path config = writeConfig(workDir, brokerPort, controllerPort);
            Path logConfig = writeLogConfig(workDir);
            Path brokerLog = workDir.resolve("broker.log");

            format(workDir, config, logConfig, brokerLog);
            List<String> command = javaCommand(logConfig);
            command.add(BrokerProcessMain.class.getName());
            command.add(config.toString());
            Process process = new ProcessBuilder(command)
                    .directory(workDir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(brokerLog.toFile()))
                    .start();
            String bootstrap = "127.0.0.1:" + brokerPort;
            EmbeddedKafka kafka = new EmbeddedKafka(process, workDir, deleteOnClose, bootstrap);
            try {
                kafka.awaitReady();
            } catch (RuntimeException e) {
                kafka.close();
                throw e;
            }
            log.info("embedded Kafka broker ready at {} (pid {}, data {})", bootstrap, process.pid(), workDir);
            return kafka;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the embedded broker in " + workDir, e);
        }
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    public long pid() {
        return process.pid();
    }

    public Path workDir() {
        return workDir;
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        Map<String, Object> config = Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 3000);
        awaitPortOpen(deadline);
        try (Admin admin = Admin.create(config)) {
            while (true) {
                if (!process.isAlive()) {
                    throw new IllegalStateException("the embedded broker exited with code " + process.exitValue()
                            + " while starting; end of its log:\n" + tail(workDir.resolve("broker.log")));
                }
                try {
                    admin.describeCluster(new DescribeClusterOptions().timeoutMs(2000)).nodes().get(3, TimeUnit.SECONDS);
                    return;
                } catch (Exception notYet) {
                    if (notYet instanceof InterruptedException) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("interrupted while waiting for the embedded broker");
                    }
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("the embedded broker did not answer within " + START_TIMEOUT.toSeconds()
                                + " s; end of its log:\n" + tail(workDir.resolve("broker.log")));
                    }
                    sleep(200);
                }
            }
        }
    }

    /** Waits for the listener first so the admin client does not log a warning per refused connection. */
    private void awaitPortOpen(long deadline) {
        int port = Integer.parseInt(bootstrapServers.substring(bootstrapServers.lastIndexOf(':') + 1));
        while (System.nanoTime() < deadline && process.isAlive()) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return;
            } catch (IOException notYet) {
                sleep(200);
            }
        }
    }

    /**
     * Drops the JVM shutdown hook that stops the broker, for a caller that closes it in its own
     * shutdown sequence: hooks run concurrently, so services still committing would otherwise
     * lose their broker halfway through stopping. The broker still exits with this JVM, as it
     * watches its standard input.
     */
    public synchronized void stopWithCaller() {
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // Too late to change the order; the hook stops the broker.
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // The hook is running or will run; stopping twice is harmless.
        }
        stopProcess();
        if (deleteOnClose) {
            deleteRecursively(workDir);
        }
    }

    private void stopProcess() {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                log.warn("embedded broker pid {} did not stop within {} s; killing it", process.pid(), STOP_TIMEOUT.toSeconds());
                process.destroyForcibly();
                process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static void format(Path workDir, Path config, Path logConfig, Path brokerLog) throws IOException {
        List<String> command = javaCommand(logConfig);
        command.addAll(List.of("kafka.tools.StorageTool", "format", "--ignore-formatted",
                "-t", Uuid.randomUuid().toString(), "-c", config.toString()));
        Process format = new ProcessBuilder(command)
                .directory(workDir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(brokerLog.toFile()))
                .start();
        format.getOutputStream().close();
        try {
            if (!format.waitFor(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                format.destroyForcibly();
                throw new IllegalStateException("formatting the embedded broker's storage timed out; log: " + brokerLog);
            }
        } catch (InterruptedException e) {
            format.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while formatting the embedded broker's storage", e);
        }
        if (format.exitValue() != 0) {
            throw new IllegalStateException("formatting the embedded broker's storage failed (exit " + format.exitValue()
                    + "); end of its log:\n" + tail(brokerLog));
        }
    }

    private static List<String> javaCommand(Path logConfig) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xms256m");
        command.add("-Xmx1g");
        command.add("-XX:+UseG1GC");
        command.add("-Djava.awt.headless=true");
        command.add("-Dlogback.configurationFile=" + logConfig);
        command.add("-Dlog4j2.configurationFile=" + logConfig.resolveSibling("log4j2.properties"));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        return command;
    }

    private static Path writeConfig(Path workDir, int brokerPort, int controllerPort) throws IOException {
        String config = String.join("\n",
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.voters=1@127.0.0.1:" + controllerPort,
                "listeners=PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + brokerPort,
                "controller.listener.names=CONTROLLER",
                "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "log.dirs=" + workDir.resolve("data"),
                "num.partitions=1",
                "auto.create.topics.enable=false",
                "offsets.topic.replication.factor=1",
                "offsets.topic.num.partitions=10",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "transaction.state.log.num.partitions=4",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                "group.initial.rebalance.delay.ms=0",
                // Fast failure detection for local runs and tests: a killed member's partitions move within seconds.
                "group.consumer.min.heartbeat.interval.ms=500",
                "group.consumer.heartbeat.interval.ms=1000",
                "group.consumer.min.session.timeout.ms=3000",
                "group.consumer.session.timeout.ms=8000",
                "message.max.bytes=" + (32 * 1024 * 1024),
                "log.cleaner.dedupe.buffer.size=16777216",
                "");
        Path path = workDir.resolve("server.properties");
        Files.writeString(path, config, StandardCharsets.UTF_8);
        return path;
    }

    private static Path writeLogConfig(Path workDir) throws IOException {
        Path logback = workDir.resolve("logback-broker.xml");
        Files.writeString(logback, """
                <configuration>
                  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
                    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{36} - %msg%n</pattern></encoder>
                  </appender>
                  <logger name="kafka.server.KafkaRaftServer" level="INFO"/>
                  <logger name="kafka.server.BrokerServer" level="INFO"/>
                  <root level="WARN"><appender-ref ref="OUT"/></root>
                </configuration>
                """, StandardCharsets.UTF_8);
        Files.writeString(workDir.resolve("log4j2.properties"), """
                status = warn
                appender.out.type = Console
                appender.out.name = OUT
                appender.out.layout.type = PatternLayout
                appender.out.layout.pattern = %d{HH:mm:ss.SSS} %-5level %c{1} - %m%n
                rootLogger.level = WARN
                rootLogger.appenderRef.out.ref = OUT
                """, StandardCharsets.UTF_8);
        return logback;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        }
    }

    private static String tail(Path file) {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(cannot read " + file + ": " + e.getMessage() + ")";
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the embedded broker", e);
        }
    }

    private static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    log.debug("could not delete {}: {}", p, e.getMessage());
                }
            });
        } catch (IOException e) {
            log.warn("could not clean up {}: {}", dir, e.getMessage());
        }
    }
}
