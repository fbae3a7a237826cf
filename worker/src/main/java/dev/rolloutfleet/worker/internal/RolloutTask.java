package dev.rolloutfleet.worker.internal;

import dev.rolloutfleet.worker.rollout.RolloutControl;
import dev.rolloutfleet.worker.rollout.StopSignal;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * One request record on its way through the worker: queued by the consumer thread, run on a
 * virtual thread of its own, handed back through the completion queue twice: when it begins
 * publishing (its in-flight slot is free: publishing waits on the broker, not on inference) and
 * when it is done (its offset may be finished). Its state moves
 * {@code QUEUED → RUNNING → PUBLISHING → DONE}, or to {@code CANCELLED} from the first two. A task
 * is only interrupted while {@code RUNNING} (deadline or cancellation), never while it publishes;
 * a cancelled task publishes no result. State changes are guarded by the task's monitor.
 */
final class RolloutTask implements Runnable, RolloutControl {

    enum State { QUEUED, RUNNING, PUBLISHING, DONE, CANCELLED }

    final ConsumerRecord<String, byte[]> record;
    final TopicPartition partition;
    private final RequestHandler handler;
    private final ScheduledExecutorService timer;
    private final Consumer<RolloutTask> onDone;
    private State state = State.QUEUED;
    private StopSignal signal;
    private Thread thread;
    private ScheduledFuture<?> deadline;
    private volatile boolean finished;
    private volatile boolean done;
    private volatile String runId;

    RolloutTask(ConsumerRecord<String, byte[]> record, RequestHandler handler, ScheduledExecutorService timer,
            Consumer<RolloutTask> onDone) {
        this.record = record;
        this.partition = new TopicPartition(record.topic(), record.partition());
        this.handler = handler;
        this.timer = timer;
        this.onDone = onDone;
    }

    @Override
    public void run() {
        synchronized (this) {
            if (state == State.CANCELLED) {
                done = true;
                onDone.accept(this);
                return;
            }
            state = State.RUNNING;
            thread = Thread.currentThread();
        }
        try {
            finished = handler.handle(record, this);
        } finally {
            synchronized (this) {
                if (state != State.CANCELLED) {
                    state = State.DONE;
                }
                if (deadline != null) {
                    deadline.cancel(false);
                }
            }
            Thread.interrupted();
            done = true;
            onDone.accept(this);
        }
    }

    /** True once the task has ended, published or not. */
    boolean isDone() {
        return done;
    }

    /** True once every output of the record is acknowledged: its offset may be committed. */
    boolean finished() {
        return finished;
    }

    long offset() {
        return record.offset();
    }

    String runId() {
        return runId;
    }

    void runId(String value) {
        runId = value;
    }

    @Override
    public synchronized StopSignal stopSignal() {
        return signal;
    }

    @Override
    public synchronized void armDeadline(Duration maxTime) {
        if (state == State.RUNNING && deadline == null) {
            String message = "safety.max_time_s of " + maxTime.toMillis() / 1000.0 + " s passed";
            deadline = timer.schedule(() -> interruptIfRunning(new StopSignal(StopSignal.Kind.DEADLINE, message)),
                    maxTime.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    /** An abort is noticed at the rollout's next op, or as soon as it starts if it has not yet. */
    synchronized void abort(String reason) {
        if (signal == null) {
            signal = new StopSignal(StopSignal.Kind.ABORT, reason == null || reason.isBlank() ? "aborted" : reason);
        }
    }

    /**
     * Moves to {@code PUBLISHING} unless cancelled; from then on nothing interrupts the task. Clears
     * an interrupt that arrived after the rollout's last look, so the sends can be awaited.
     */
    boolean beginPublishing() {
        synchronized (this) {
            if (state == State.CANCELLED) {
                return false;
            }
            state = State.PUBLISHING;
            if (deadline != null) {
                deadline.cancel(false);
            }
        }
        Thread.interrupted();
        onDone.accept(this);
        return true;
    }

    /**
     * Cancels the task if it has not begun publishing: its result will not be published and its
     * offset stays unfinished for the partition's next owner.
     *
     * @return false when the task is already publishing or done
     */
    boolean cancel(String why) {
        synchronized (this) {
            if (state != State.QUEUED && state != State.RUNNING) {
                return false;
            }
            boolean wasRunning = state == State.RUNNING;
            signal = new StopSignal(StopSignal.Kind.CANCEL, why);
            state = State.CANCELLED;
            if (wasRunning) {
                thread.interrupt();
            }
            return true;
        }
    }

    synchronized boolean isCancelled() {
        return state == State.CANCELLED;
    }

    private synchronized void interruptIfRunning(StopSignal stop) {
        if (state == State.RUNNING) {
            signal = stop;
            thread.interrupt();
        }
    }
}
