package dev.rolloutfleet.ops;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * A {@code fleet} subcommand running in a child JVM on this JVM's classpath, for the chaos runs.
 * A restart starts a new process in the same slot as the next incarnation; {@code args} gives the
 * subcommand and flags of each incarnation. Output goes to {@code SLOT-INCARNATION.log} in the log
 * directory. Confined to the thread that drives the chaos run.
 */
final class FleetChild {

    private final String slot;
    private final Path logDir;
    private final IntFunction<List<String>> args;
    private Process process;
    private int incarnation;

    private FleetChild(String slot, Path logDir, IntFunction<List<String>> args) {
        this.slot = slot;
        this.logDir = logDir;
        this.args = args;
    }

    static FleetChild start(String slot, Path logDir, IntFunction<List<String>> args) throws IOException {
        FleetChild child = new FleetChild(slot, logDir, args);
        child.launch();
        return child;
    }

    /** {@code SLOT-INCARNATION}: differs between incarnations, so traces tell them apart. */
    String id() {
        return slot + "-" + incarnation;
    }

    /** SIGKILL: no shutdown hook, no commit, no goodbye to the group. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    void restart() throws IOException {
        incarnation++;
        launch();
    }

    void stop() {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private void launch() throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), FleetCommand.class.getName()));
        command.addAll(args.apply(incarnation));
        // --exit-with-parent: the child watches its stdin, so a killed chaos run leaves no orphan.
        command.add("--exit-with-parent");
        process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(logDir.resolve(id() + ".log").toFile()).start();
    }
}
