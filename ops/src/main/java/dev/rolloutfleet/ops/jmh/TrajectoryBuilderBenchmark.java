package dev.rolloutfleet.ops.jmh;

import dev.rolloutfleet.collector.build.BuiltTrajectory;
import dev.rolloutfleet.collector.build.TrajectoryBuilder;
import dev.rolloutfleet.common.wire.CaptureEntry;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.SchemaVersion;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The trajectory builder on the two shapes that matter: one long agent rollout (100 turns whose
 * prompts grow to 32k tokens) and many short ones (1,000 single-turn attempts). The
 * {@code copy*} baselines touch the same token ids once (what any builder must at least do), so
 * builder / baseline says what prefix merging costs on top of reading its input.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class TrajectoryBuilderBenchmark {

    private final TrajectoryBuilder builder = new TrajectoryBuilder();
    private List<CaptureEntry> longRollout;
    private List<List<CaptureEntry>> singleTurns;

    @Setup
    public void setUp() {
        SplittableRandom random = new SplittableRandom(42);
        // 100 turns of 160 observation + 160 generated tokens: the last prompt holds ~32k tokens.
        longRollout = new ArrayList<>();
        List<Integer> transcript = new ArrayList<>(tokens(random, 200));
        for (int turn = 0; turn < 100; turn++) {
            transcript.addAll(tokens(random, 160));
            List<Integer> generation = tokens(random, 160);
            longRollout.add(entry("long", "call-" + String.format("%03d", turn), List.copyOf(transcript), generation));
            transcript.addAll(generation);
        }
        Collections.shuffle(longRollout, new java.util.Random(1)); // arrival order is not turn order
        singleTurns = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            singleTurns.add(List.of(entry("single-" + i, "call-0", tokens(random, 300), tokens(random, 120))));
        }
    }

    @Benchmark
    public BuiltTrajectory build100Turns32kTokens() {
        return builder.build(longRollout, List.of());
    }

    @Benchmark
    public long copy100Turns32kTokens() {
        return copy(longRollout);
    }

    @Benchmark
    public void build1000SingleTurns(Blackhole sink) {
        for (List<CaptureEntry> attempt : singleTurns) {
            sink.consume(builder.build(attempt, List.of()));
        }
    }

    @Benchmark
    public void copy1000SingleTurns(Blackhole sink) {
        for (List<CaptureEntry> attempt : singleTurns) {
            sink.consume(copy(attempt));
        }
    }

    /** Every token id of every entry into one array, plus a checksum so none of it is dead code. */
    private static long copy(List<CaptureEntry> entries) {
        int size = 0;
        for (CaptureEntry e : entries) {
            size += e.promptTokenIds().size() + e.generationTokenIds().size();
        }
        int[] out = new int[size];
        int i = 0;
        long sum = 0;
        for (CaptureEntry e : entries) {
            for (Integer id : e.promptTokenIds()) {
                out[i++] = id;
            }
            for (Integer id : e.generationTokenIds()) {
                out[i++] = id;
            }
        }
        for (int v : out) {
            sum += v;
        }
        return sum;
    }

    private static CaptureEntry entry(String runId, String callId, List<Integer> prompt, List<Integer> generation) {
        List<Double> logprobs = Collections.nCopies(generation.size(), -0.5);
        return new CaptureEntry(SchemaVersion.CURRENT, runId, "a1", callId, "agent", "bench", prompt, generation, logprobs,
                Json.object(), 0L, null);
    }

    private static List<Integer> tokens(SplittableRandom random, int n) {
        List<Integer> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(random.nextInt(3, 50_000));
        }
        return out;
    }
}
