package dev.rolloutfleet.ops;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.CountDownLatch;

/** Small helpers the long-running commands share. */
final class Services {

    private Services() {}

    /** A readable id that differs between processes: host name and pid. */
    static String defaultId(String role) {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "localhost";
        }
        return role + "-" + host.replaceAll("[^A-Za-z0-9._-]", "_") + "-" + ManagementFactory.getRuntimeMXBean().getPid();
    }

    /** Blocks until SIGTERM/SIGINT, then runs {@code onStop} before the JVM exits. */
    static void runUntilStopped(Runnable onStop) throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            onStop.run();
            stopped.countDown();
        }, "fleet-shutdown"));
        stopped.await();
    }
}
