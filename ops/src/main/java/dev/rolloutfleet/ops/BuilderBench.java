package dev.rolloutfleet.ops;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.ops.jmh.TrajectoryBuilderBenchmark;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code fleet bench builder}: runs the JMH benchmark of the trajectory builder
 * ({@link TrajectoryBuilderBenchmark}) and ends with a JSON line: each case in milliseconds per
 * operation, beside the baseline that only copies the same token ids, and their ratio.
 */
@Command(name = "builder", mixinStandardHelpOptions = true,
        description = "JMH benchmark of the trajectory builder (100 turns / 32k tokens; 1,000 single-turn attempts).")
final class BuilderBench implements Callable<Integer> {

    @Option(names = "--quick", description = "Shorter warm-up and measurement (about 40 s; wider error bars).")
    boolean quick;

    @Override
    public Integer call() throws Exception {
        ChainedOptionsBuilder options = new OptionsBuilder().include(TrajectoryBuilderBenchmark.class.getName() + ".*");
        if (quick) {
            options.warmupIterations(2).warmupTime(TimeValue.seconds(1)).measurementIterations(3)
                    .measurementTime(TimeValue.seconds(1)).forks(1);
        }
        Map<String, Double> ms = new HashMap<>();
        for (RunResult result : new Runner(options.build()).run()) {
            String name = result.getParams().getBenchmark();
            ms.put(name.substring(name.lastIndexOf('.') + 1), result.getPrimaryResult().getScore() / 1000.0);
        }
        ObjectNode summary = Json.object();
        summary.put("build_100_turns_32k_ms", round(ms.get("build100Turns32kTokens")))
                .put("copy_100_turns_32k_ms", round(ms.get("copy100Turns32kTokens")))
                .put("ratio_100_turns", round(ms.get("build100Turns32kTokens") / ms.get("copy100Turns32kTokens")))
                .put("build_1000_single_turns_ms", round(ms.get("build1000SingleTurns")))
                .put("copy_1000_single_turns_ms", round(ms.get("copy1000SingleTurns")))
                .put("ratio_single_turns", round(ms.get("build1000SingleTurns") / ms.get("copy1000SingleTurns")));
        System.out.println(Json.encodeToString(summary));
        return 0;
    }

    private static double round(double value) {
        return Math.round(value * 100) / 100.0;
    }
}
