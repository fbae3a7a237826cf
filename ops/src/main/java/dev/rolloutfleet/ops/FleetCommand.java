package dev.rolloutfleet.ops;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code fleet} command line. */
@Command(name = "fleet", mixinStandardHelpOptions = true, version = "rollout-fleet 0.1.0",
        description = "Durable, explainable RL rollouts on Apache Kafka.",
        subcommands = {DemoCommand.class, WorkerCommand.class, CollectorCommand.class, BrokerCommand.class,
                SubmitCommand.class, ReplayCommand.class, TopicsCommand.class, TraceCommand.class, StatusCommand.class, SimLlmCommand.class, BenchCommand.class, ChaosCommand.class,
                CommandLine.HelpCommand.class})
public final class FleetCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(new CommandLine(new FleetCommand()).execute(args));
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
