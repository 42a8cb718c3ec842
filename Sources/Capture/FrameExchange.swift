#if canImport(Glibc)
import Glibc
#endif
import WinkCore

/// Hands the newest camera frame from a capture thread to a processing thread: "latest frame wins"
/// (STYLE.md; MediaPipe's flow limiter). At most one frame waits; a newer frame replaces a waiting one,
/// which is dropped and counted. Never a queue.
///
/// Triple buffering over three `PixelBuffer`s allocated once: one the producer fills (`producerBuffer`),
/// at most one waiting, one the consumer works on (returned by `take`). `publish` and `take` swap
/// buffers under a mutex and never allocate, so the frame path allocates nothing per frame.
///
/// Thread-safety: one producer thread (`producerBuffer`, `publish`) and one consumer thread (`take`);
/// `close`, `droppedFrames` and `deliveredFrames` may be called from any thread.
public final class FrameExchange: @unchecked Sendable {
    private var buffers: [PixelBuffer]
    private var producerIndex = 0
    private var waitingIndex = 1
    private var consumerIndex = 2
    private var waiting: FrameInfo?
    private var closed = false
    private var dropped = 0
    private var delivered = 0
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()

    /// - Parameter wantsColor: whether the buffers ask sources for the BGR plane too (overlay output).
    public init(wantsColor: Bool = false) {
        buffers = (0..<3).map { _ in PixelBuffer(wantsColor: wantsColor) }
        pthread_mutex_init(&mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(&condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    /// The buffer the producer fills next. Stays the producer's until its next `publish`.
    public var producerBuffer: PixelBuffer {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return buffers[producerIndex]
    }

    /// Hands the filled `producerBuffer` over as the waiting frame. A frame still waiting is dropped
    /// (counted in `droppedFrames`) and its buffer becomes the producer's next one. Wakes `take`.
    public func publish(_ info: FrameInfo) {
        pthread_mutex_lock(&mutex)
        if waiting != nil { dropped += 1 }
        swap(&producerIndex, &waitingIndex)
        waiting = info
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    /// Waits up to `timeout` seconds for a frame.
    /// - Returns: the newest frame and the buffer holding it (the consumer's until its next `take`), or
    ///   nil on timeout or once `close` was called.
    public func take(timeout: Double) -> (buffer: PixelBuffer, info: FrameInfo)? {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let total = Int(deadline.tv_nsec) + Int(max(0, timeout) * 1e9)
        deadline.tv_sec += total / 1_000_000_000
        deadline.tv_nsec = total % 1_000_000_000
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while waiting == nil && !closed {
            if pthread_cond_timedwait(&condition, &mutex, &deadline) == ETIMEDOUT { break }
        }
        guard let info = waiting, !closed else { return nil }
        swap(&consumerIndex, &waitingIndex)
        waiting = nil
        delivered += 1
        return (buffers[consumerIndex], info)
    }

    /// Wakes a waiting `take` and makes every later `take` return nil; a waiting frame is discarded.
    public func close() {
        pthread_mutex_lock(&mutex)
        closed = true
        waiting = nil
        pthread_cond_broadcast(&condition)
        pthread_mutex_unlock(&mutex)
    }

    /// Frames replaced by a newer one before the consumer took them.
    public var droppedFrames: Int {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return dropped
    }

    /// Frames handed to the consumer.
    public var deliveredFrames: Int {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return delivered
    }
}
