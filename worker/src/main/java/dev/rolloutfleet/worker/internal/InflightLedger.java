package dev.rolloutfleet.worker.internal;

import java.util.NavigableSet;
import java.util.TreeSet;

/**
 * Which records of one partition are finished, so the worker commits exactly the offset below
 * which everything is finished and carries the finished offsets above it in the commit metadata.
 * A new owner seeds its ledger from that commit and skips those offsets instead of running them
 * again. Records finish out of order; an offset is only {@link #finish finished} once its outputs
 * are acknowledged by the broker.
 *
 * <p>The metadata can describe a bounded window above the committed offset. {@link #canTake}
 * refuses an offset that would stretch the window past that bound, and the worker pauses the
 * partition instead of dropping the map. Confined to the consumer thread.
 */
final class InflightLedger {

    private final long window;
    /** Received (queued or running) and not yet finished. */
    private final NavigableSet<Long> unfinished = new TreeSet<>();
    /** Finished, or inherited as finished, above the lowest unfinished offset. */
    private final NavigableSet<Long> finishedAbove = new TreeSet<>();
    /** The offset after the highest one received, or the committed offset we started from. */
    private long next;

    /**
     * @param committed the committed offset this owner starts from (the consumer's position)
     * @param inherited finished offsets above it, decoded from the previous owner's metadata
     * @param window the most offsets above the committed one the metadata can describe
     */
    InflightLedger(long committed, NavigableSet<Long> inherited, long window) {
        this.next = committed;
        this.window = window;
        this.finishedAbove.addAll(inherited.tailSet(committed, false));
    }

    /** True when the previous owner finished this offset: skip it, do not run it again. */
    boolean alreadyFinished(long offset) {
        return finishedAbove.contains(offset) || offset < committable();
    }

    /**
     * True when taking {@code offset} keeps the window within the metadata bound. The window
     * counts from the offset that would be committed to the highest offset that could finish.
     */
    boolean canTake(long offset) {
        return offset - committable() <= window;
    }

    /** Records that {@code offset} was received and will run. */
    void take(long offset) {
        unfinished.add(offset);
        next = Math.max(next, offset + 1);
    }

    /** Records that {@code offset}'s outputs are acknowledged; it never runs again. */
    void finish(long offset) {
        if (unfinished.remove(offset)) {
            finishedAbove.add(offset);
            trim();
        }
    }

    /** A received offset that was skipped (already finished elsewhere): it counts as finished. */
    void skip(long offset) {
        next = Math.max(next, offset + 1);
        finishedAbove.add(offset);
        trim();
    }

    /** The offset to commit: every record below it is finished. */
    long committable() {
        long low = unfinished.isEmpty() ? next : unfinished.first();
        // Offsets the previous owner finished, directly at the front, are finished too.
        while (finishedAbove.contains(low)) {
            low++;
        }
        return low;
    }

    /** Commit metadata describing the finished offsets above {@link #committable()}. */
    String metadata() {
        long committed = committable();
        return LedgerMetadata.encode(committed, finishedAbove.tailSet(committed, false));
    }

    int unfinishedCount() {
        return unfinished.size();
    }

    private void trim() {
        long committed = committable();
        // Everything below the committed offset is finished; remember that before forgetting the set.
        next = Math.max(next, committed);
        finishedAbove.headSet(committed, true).clear();
    }
}
