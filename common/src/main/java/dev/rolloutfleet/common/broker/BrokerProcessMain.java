package dev.rolloutfleet.common.broker;

import java.io.IOException;

/**
 * Entry point of the child JVM that {@link EmbeddedKafka} starts: runs Kafka's own broker main,
 * and exits when its standard input closes. The parent holds that pipe open for as long as it
 * lives, so a parent killed with SIGKILL (no shutdown hook runs) still leaves no broker behind.
 * Only this class touches the broker jars; it never runs inside a worker or collector.
 */
public final class BrokerProcessMain {

    private BrokerProcessMain() {}

    public static void main(String[] args) {
        Thread watcher = new Thread(BrokerProcessMain::exitWhenParentGoes, "parent-watcher");
        watcher.setDaemon(true);
        watcher.start();
        kafka.Kafka.main(args);
    }

    private static void exitWhenParentGoes() {
        try {
            while (System.in.read() != -1) {
                // The parent never writes; reading only waits for end-of-stream.
            }
        } catch (IOException e) {
            // A broken pipe means the same as end-of-stream: the parent is gone.
        }
        Thread reaper = new Thread(() -> {
            try {
                Thread.sleep(20_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Runtime.getRuntime().halt(1);
        }, "shutdown-reaper");
        reaper.setDaemon(true);
        reaper.start();
        System.exit(0);
    }
}
