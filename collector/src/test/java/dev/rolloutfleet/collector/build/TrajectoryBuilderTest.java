package dev.rolloutfleet.collector.build;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rolloutfleet.collector.build.BuiltTrajectory.TurnSpan;
import dev.rolloutfleet.common.wire.CaptureEntry;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class TrajectoryBuilderTest {

    private final TrajectoryBuilder builder = new TrajectoryBuilder();

    static CaptureEntry call(String id, List<Integer> prompt, List<Integer> generation) {
        List<Double> logprobs = generation.stream().map(t -> -t / 100.0).toList();
        return new CaptureEntry(1, "run", "a1", id, "main", "m", prompt, generation, logprobs, null, null, null);
    }

    static List<Integer> ints(int... values) {
        return IntStream.of(values).boxed().toList();
    }

    static List<CaptureEntry> threeTurnChain() {
        return List.of(
                call("c1", ints(1, 2, 3), ints(4, 5)),
                call("c2", ints(1, 2, 3, 4, 5, 6, 7), ints(8)),
                call("c3", ints(1, 2, 3, 4, 5, 6, 7, 8, 9), ints(10, 11)));
    }

    @Test
    void anAppendOnlyChainBecomesOneSequenceWithMaskLogprobsAndSpansTokenByToken() {
        BuiltTrajectory built = builder.build(threeTurnChain(), List.of());

        assertThat(built.masked()).isFalse();
        assertThat(built.tokens()).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
        assertThat(built.lossMask()).containsExactly(0, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1);
        assertThat(built.logprobs()).containsExactly(0.0, 0.0, 0.0, -0.04, -0.05, 0.0, 0.0, -0.08, 0.0, -0.10, -0.11);
        assertThat(built.spans()).containsExactly(
                new TurnSpan("c1", 0, 3, 5), new TurnSpan("c2", 5, 7, 8), new TurnSpan("c3", 8, 9, 11));
        assertThat(built.metrics().calls()).isEqualTo(3);
        assertThat(built.metrics().chains()).isEqualTo(1);
        assertThat(built.metrics().roots()).isEqualTo(1);
        assertThat(built.metrics().deliveredFraction()).isEqualTo(1.0);
        assertThat(built.metrics().generatedTokensCaptured()).isEqualTo(5);
        assertThat(built.metrics().generatedTokensDelivered()).isEqualTo(5);
    }

    @Test
    void theOrderEntriesArriveInDoesNotMatter() {
        BuiltTrajectory expected = builder.build(threeTurnChain(), List.of());
        for (long seed = 0; seed < 10; seed++) {
            List<CaptureEntry> shuffled = new ArrayList<>(threeTurnChain());
            Collections.shuffle(shuffled, new Random(seed));
            BuiltTrajectory built = builder.build(shuffled, List.of());
            assertThat(built.tokens()).isEqualTo(expected.tokens());
            assertThat(built.lossMask()).isEqualTo(expected.lossMask());
            assertThat(built.spans()).isEqualTo(expected.spans());
        }
    }

    @Test
    void elevenHundredTurnsAndOver32kTokensBuildOneChain() {
        Random random = new Random(7);
        List<CaptureEntry> entries = new ArrayList<>();
        List<Integer> context = new ArrayList<>(ints(1, 2, 3));
        int generated = 0;
        for (int turn = 0; turn < 1100; turn++) {
            List<Integer> generation = new ArrayList<>();
            int generationLength = 1 + random.nextInt(40);
            for (int i = 0; i < generationLength; i++) {
                generation.add(random.nextInt(50_000));
            }
            generated += generation.size();
            entries.add(call(String.format("c%04d", turn), List.copyOf(context), generation));
            context.addAll(generation);
            int interTurn = 1 + random.nextInt(20);
            for (int i = 0; i < interTurn; i++) {
                context.add(random.nextInt(50_000));
            }
        }
        Collections.shuffle(entries, new Random(8));

        BuiltTrajectory built = builder.build(entries, List.of());

        assertThat(built.masked()).isFalse();
        assertThat(built.spans()).hasSize(1100);
        assertThat(built.tokens().length).isGreaterThan(32_000);
        assertThat(java.util.Arrays.stream(built.lossMask()).sum()).isEqualTo(generated);
        assertThat(built.metrics().generatedTokensDelivered()).isEqualTo(generated);
        TurnSpan last = built.spans().get(1099);
        assertThat(java.util.Arrays.copyOfRange(built.tokens(), last.generationStart(), last.generationEnd()))
                .containsExactly(entries.stream().filter(e -> e.callId().equals("c1099")).findFirst().orElseThrow()
                        .generationTokenIds().stream().mapToInt(Integer::intValue).toArray());
    }

    static Stream<Arguments> maskedCases() {
        return Stream.of(
                Arguments.of("identical parents make the child ambiguous", List.of(
                        call("p1", ints(1), ints(2)),
                        call("p2", ints(1), ints(2)),
                        call("child", ints(1, 2, 3), ints(4))), List.of(), MaskReason.AMBIGUOUS),
                Arguments.of("two roots", List.of(
                        call("a", ints(1), ints(2)),
                        call("b", ints(7, 8), ints(9))), List.of(), MaskReason.MULTI_ROOT),
                Arguments.of("a branch makes two chains", List.of(
                        call("c1", ints(1), ints(2)),
                        call("c2", ints(1, 2, 3), ints(4)),
                        call("c3", ints(1, 2, 5), ints(6))), List.of(), MaskReason.MULTI_CHAIN),
                Arguments.of("every generation is empty", List.of(
                        call("c1", ints(1), ints()),
                        call("c2", ints(1, 2), ints())), List.of(), MaskReason.EMPTY_TOKENS),
                Arguments.of("log-probs do not match the generation", List.of(
                        new CaptureEntry(1, "run", "a1", "bad", "main", "m", ints(1), ints(2, 3), List.of(-0.1), null, null, null)),
                        List.of(), MaskReason.MALFORMED),
                Arguments.of("the snapshot is incomplete", threeTurnChain(), List.of("late_entry"), MaskReason.INCOMPLETE),
                Arguments.of("no entries at all", List.of(), List.of(), MaskReason.MISSING),
                Arguments.of("no entries, and the evidence is known incomplete", List.of(), List.of("capture_write_failed"),
                        MaskReason.INCOMPLETE));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("maskedCases")
    void unsafeEvidenceIsMaskedWithItsReason(String name, List<CaptureEntry> entries, List<String> incomplete, String reason) {
        BuiltTrajectory built = builder.build(entries, incomplete);
        assertThat(built.masked()).isTrue();
        assertThat(built.maskReason()).isEqualTo(reason);
        assertThat(built.tokens()).isEmpty();
        assertThat(built.lossMask()).isEmpty();
    }

    @Test
    void theAmbiguousChildIsQuarantinedAndTheIdenticalRetryReported() {
        BuiltTrajectory built = builder.build(List.of(
                call("p1", ints(1), ints(2)),
                call("p2", ints(1), ints(2)),
                call("child", ints(1, 2, 3), ints(4))), List.of());
        assertThat(built.diagnostics().at("/quarantined").toString())
                .contains("{\"call_id\":\"child\",\"reason\":\"ambiguous\",\"candidates\":[\"p1\",\"p2\"]}")
                .contains("{\"call_id\":\"p2\",\"reason\":\"retry\"}");
    }

    @Test
    void aResolvedRetryKeepsTheCallThatLeadsOnAndIsReportedNotMasked() {
        BuiltTrajectory built = builder.build(List.of(
                call("a-first", ints(1), ints(9)),
                call("b-retry", ints(1), ints(2)),
                call("next", ints(1, 2, 3), ints(4))), List.of());
        assertThat(built.masked()).isFalse();
        assertThat(built.tokens()).containsExactly(1, 2, 3, 4);
        assertThat(built.spans()).extracting(TurnSpan::callId).containsExactly("b-retry", "next");
        assertThat(built.metrics().quarantinedCalls()).isEqualTo(1);
        assertThat(built.metrics().deliveredFraction()).isEqualTo(2.0 / 3);
        assertThat(built.diagnostics().at("/quarantined/0/call_id").asText()).isEqualTo("a-first");
    }

    @Test
    void anUnresolvedRetryKeepsTheSmallestCallId() {
        BuiltTrajectory built = builder.build(List.of(
                call("c1", ints(1, 2), ints(3)),
                call("c2-b", ints(1, 2, 3, 4), ints(6)),
                call("c2-a", ints(1, 2, 3, 4), ints(5))), List.of());
        assertThat(built.masked()).isFalse();
        assertThat(built.tokens()).containsExactly(1, 2, 3, 4, 5);
        assertThat(built.spans()).extracting(TurnSpan::callId).containsExactly("c1", "c2-a");
        assertThat(built.diagnostics().at("/quarantined/0/call_id").asText()).isEqualTo("c2-b");
    }

    @Test
    void callsThatGeneratedNothingAreDroppedAndCounted() {
        List<CaptureEntry> entries = new ArrayList<>(threeTurnChain());
        entries.add(call("empty", ints(1, 2, 3), ints()));
        BuiltTrajectory built = builder.build(entries, List.of());
        assertThat(built.masked()).isFalse();
        assertThat(built.metrics().emptyGenerationCalls()).isEqualTo(1);
        assertThat(built.metrics().calls()).isEqualTo(4);
        assertThat(built.diagnostics().at("/dropped_empty_generation/0").asText()).isEqualTo("empty");
    }

    @Test
    void aMalformedEntryIsNamedInTheDiagnostics() {
        BuiltTrajectory built = builder.build(List.of(
                new CaptureEntry(1, "run", "a1", "bad", "main", "m", ints(1), ints(2, 3), List.of(-0.1), null, null, null)),
                List.of());
        assertThat(built.diagnostics().at("/malformed/0/problem").asText())
                .isEqualTo("generation_logprobs has 1 values for 2 generated tokens");
    }
}
