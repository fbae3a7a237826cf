package dev.rolloutfleet.ops;

import picocli.CommandLine.Command;

/** {@code fleet chaos}: fault-injection runs that check the fleet's guarantees end to end. */
@Command(name = "chaos", mixinStandardHelpOptions = true,
        description = "Fault-injection runs; each prints a JSON object as its last line and exits 0 only if the guarantees held.",
        subcommands = {WorkerKillChaos.class, CollectorKillChaos.class})
final class ChaosCommand implements Runnable {

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
