package dev.rolloutfleet.worker.rollout;

import java.time.Duration;

/**
 * How the engine steers a running rollout from outside. The runner reads {@link #stopSignal()}
 * before each op, and again when a blocking call is interrupted; the engine sets the signal
 * first and interrupts second, so an interrupted rollout always finds out why.
 */
public interface RolloutControl {

    RolloutControl NONE = new RolloutControl() {
        @Override
        public StopSignal stopSignal() {
            return null;
        }

        @Override
        public void armDeadline(Duration maxTime) {}
    };

    /** Null while the rollout may go on. */
    StopSignal stopSignal();

    /** Asks to be interrupted with {@link StopSignal.Kind#DEADLINE} once {@code maxTime} has passed. */
    void armDeadline(Duration maxTime);
}
