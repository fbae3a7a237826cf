package dev.rolloutfleet.worker.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.NavigableSet;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class InflightLedgerTest {

    private static final long WIDE = 1_000_000;

    private static NavigableSet<Long> set(Long... offsets) {
        return new TreeSet<>(List.of(offsets));
    }

    @Test
    void outOfOrderCompletionCommitsOnlyBelowTheLowestUnfinished() {
        InflightLedger ledger = new InflightLedger(100, set(), WIDE);
        for (long o = 100; o < 105; o++) {
            ledger.take(o);
        }
        ledger.finish(103);
        ledger.finish(101);
        assertThat(ledger.committable()).isEqualTo(100);
        assertThat(LedgerMetadata.decode(100, ledger.metadata())).containsExactly(101L, 103L);

        ledger.finish(100);
        assertThat(ledger.committable()).isEqualTo(102);
        assertThat(LedgerMetadata.decode(102, ledger.metadata())).containsExactly(103L);

        ledger.finish(102);
        ledger.finish(104);
        assertThat(ledger.committable()).isEqualTo(105);
        assertThat(ledger.metadata()).isEmpty();
    }

    @Test
    void anOffsetIsNeverCommittedPastWhileUnfinished() {
        InflightLedger ledger = new InflightLedger(0, set(), WIDE);
        ledger.take(0);
        ledger.take(1);
        ledger.finish(1);
        ledger.finish(1);
        assertThat(ledger.committable()).isZero();
        assertThat(ledger.unfinishedCount()).isEqualTo(1);
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 7, 1234, 99_999})
    void metadataRoundTripsRandomFinishedSets(long seed) {
        Random random = new Random(seed);
        long committed = random.nextInt(1_000_000);
        NavigableSet<Long> finished = new TreeSet<>();
        for (int i = 0; i < 500; i++) {
            finished.add(committed + 1 + random.nextInt(20_000));
        }
        String metadata = LedgerMetadata.encode(committed, finished);
        assertThat(LedgerMetadata.decode(committed, metadata)).isEqualTo(finished);
    }

    @Test
    void aFullWindowFitsTheMetadataBound() {
        int maxChars = 4000;
        long window = LedgerMetadata.windowFor(maxChars);
        NavigableSet<Long> finished = new TreeSet<>();
        finished.add(10 + window);
        assertThat(LedgerMetadata.encode(10, finished).length()).isLessThanOrEqualTo(maxChars);
        assertThat(window).isGreaterThan(20_000);
    }

    @Test
    void foreignOrBrokenMetadataDecodesToNothing() {
        assertThat(LedgerMetadata.decode(5, null)).isEmpty();
        assertThat(LedgerMetadata.decode(5, "")).isEmpty();
        assertThat(LedgerMetadata.decode(5, "some other tool")).isEmpty();
        assertThat(LedgerMetadata.decode(5, "rf1:b:!!!")).isEmpty();
    }

    @Test
    void reachingTheWindowBoundRefusesNewOffsetsUntilTheFrontFinishes() {
        InflightLedger ledger = new InflightLedger(0, set(), 10);
        ledger.take(0);
        for (long o = 1; o <= 10; o++) {
            assertThat(ledger.canTake(o)).isTrue();
            ledger.take(o);
            ledger.finish(o);
        }
        assertThat(ledger.canTake(11)).as("offset 11 would stretch the window past 10").isFalse();
        ledger.finish(0);
        assertThat(ledger.committable()).isEqualTo(11);
        assertThat(ledger.canTake(11)).isTrue();
    }

    @Test
    void aNewOwnerSkipsWhatThePreviousOwnerFinished() {
        InflightLedger previous = new InflightLedger(0, set(), WIDE);
        for (long o = 0; o < 6; o++) {
            previous.take(o);
        }
        previous.finish(1);
        previous.finish(3);
        previous.finish(4);
        long committed = previous.committable();
        String metadata = previous.metadata();

        InflightLedger next = new InflightLedger(committed, LedgerMetadata.decode(committed, metadata), WIDE);
        assertThat(committed).isZero();
        assertThat(next.alreadyFinished(0)).isFalse();
        assertThat(next.alreadyFinished(1)).isTrue();
        assertThat(next.alreadyFinished(2)).isFalse();
        assertThat(next.alreadyFinished(3)).isTrue();
        assertThat(next.alreadyFinished(4)).isTrue();
        assertThat(next.alreadyFinished(5)).isFalse();

        next.take(0);
        next.skip(1);
        next.take(2);
        // Commits made before the skipped offsets are received must still carry them.
        assertThat(LedgerMetadata.decode(next.committable(), next.metadata())).contains(1L, 3L, 4L);
        next.finish(0);
        next.finish(2);
        assertThat(next.committable()).isEqualTo(5);
        next.take(5);
        next.finish(5);
        assertThat(next.committable()).isEqualTo(6);
        assertThat(next.metadata()).isEmpty();
    }
}
