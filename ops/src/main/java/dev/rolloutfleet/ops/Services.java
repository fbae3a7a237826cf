package dev.rolloutfleet.ops;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

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

    /** Exits this JVM when standard input closes: a parent that dies, even by SIGKILL, takes this process along. */
    static void exitWhenStdinCloses() {
        Thread watcher = new Thread(() -> {
            try {
                while (System.in.read() != -1) {
                    // waiting for end of stream
                }
            } catch (IOException e) {
                // same as end of stream
            }
            System.exit(0);
        }, "parent-watcher");
        watcher.setDaemon(true);
        watcher.start();
    }

    /** Deletes a directory and everything under it (benchmarks' scratch space). */
    static void deleteTree(Path root) throws IOException {
        try (var paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** Waits until a service stops, by itself or because it was closed. */
    @FunctionalInterface
    interface Termination {
        void await() throws InterruptedException;
    }

    /**
     * Runs until SIGTERM/SIGINT (then stops the service cleanly and returns 0) or until the
     * service stops by itself, which is a failure (returns 1, so a supervisor restarts it).
     */
    static int runUntilStopped(Termination termination, Runnable close, AutoCloseable... alsoClose) throws InterruptedException {
        AtomicBoolean signalled = new AtomicBoolean();
        CountDownLatch closed = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            signalled.set(true);
            close.run();
            closeAll(alsoClose);
            closed.countDown();
        }, "fleet-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        termination.await();
        if (signalled.get()) {
            closed.await();
            return 0;
        }
        System.err.println("the service stopped on its own; see the log above. Exiting with status 1.");
        Runtime.getRuntime().removeShutdownHook(hook);
        close.run();
        closeAll(alsoClose);
        return 1;
    }

    private static void closeAll(AutoCloseable... resources) {
        for (AutoCloseable resource : resources) {
            if (resource == null) {
                continue;
            }
            try {
                resource.close();
            } catch (Exception e) {
                System.err.println("closing " + resource + " failed: " + e);
            }
        }
    }
}
