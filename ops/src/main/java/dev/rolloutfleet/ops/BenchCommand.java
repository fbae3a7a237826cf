package dev.rolloutfleet.ops;

import picocli.CommandLine.Command;

/** {@code fleet bench}: benchmarks that print their figures as a JSON last line. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Benchmarks; each prints a JSON object as its last line.",
        subcommands = {WorkerBench.class, PipelineBench.class, SinkBench.class, BuilderBench.class})
final class BenchCommand implements Runnable {

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
