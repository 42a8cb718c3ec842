#if canImport(Glibc)
import Glibc
#endif

/// Where and when a frame was captured.
public struct FrameInfo: Sendable, Equatable {
    /// 0-based index of the frame in its source (counting every frame the source produced, including
    /// frames the pipeline later skipped).
    public var index: Int
    /// Seconds from the first frame of the source, from the frame's own timestamp (the container's
    /// presentation time for a file, the V4L2 buffer timestamp for a camera); never processing time.
    public var time: Double
    /// Capture time on `CLOCK_MONOTONIC`, in nanoseconds: the V4L2 buffer timestamp for a camera, the
    /// pacing clock's reading when the frame was released for a file.
    public var monotonicNanoseconds: UInt64

    /// Frame info; `time` in seconds from the first frame, `monotonicNanoseconds` on `CLOCK_MONOTONIC`.
    public init(index: Int, time: Double, monotonicNanoseconds: UInt64) {
        self.index = index
        self.time = time
        self.monotonicNanoseconds = monotonicNanoseconds
    }
}

/// A reusable frame buffer: an 8-bit grey plane and, when asked for, a BGR24 plane, both tightly packed
/// (stride = width, resp. 3 x width), rows top to bottom.
///
/// Sources write into a buffer the caller owns, so the frame path allocates only when the frame size
/// changes. Not thread-safe: hand a buffer to one thread at a time (see `FrameExchange`).
public final class PixelBuffer: @unchecked Sendable {
    /// Image width in pixels (0 before the first `resize`).
    public private(set) var width: Int = 0
    /// Image height in pixels (0 before the first `resize`).
    public private(set) var height: Int = 0
    /// `width x height` bytes of luma (BT.601), origin top-left.
    public private(set) var gray: UnsafeMutablePointer<UInt8>
    /// `width x height x 3` bytes, B G R order; valid only when `wantsColor` is true.
    public private(set) var bgr: UnsafeMutablePointer<UInt8>
    /// Whether sources should also fill `bgr` (needed only for overlay output).
    public var wantsColor: Bool
    private var grayCapacity = 0
    private var bgrCapacity = 0

    /// An empty buffer (0 x 0); the planes are allocated by the first `resize`.
    public init(wantsColor: Bool = false) {
        self.wantsColor = wantsColor
        gray = .allocate(capacity: 1)
        bgr = .allocate(capacity: 1)
    }

    deinit {
        gray.deallocate()
        bgr.deallocate()
    }

    /// Makes the planes hold a `width x height` image, reallocating only when it grows.
    public func resize(width: Int, height: Int) {
        precondition(width > 0 && height > 0, "frame size must be positive")
        self.width = width
        self.height = height
        let n = width * height
        if n > grayCapacity {
            gray.deallocate()
            gray = .allocate(capacity: n)
            grayCapacity = n
        }
        if wantsColor && 3 * n > bgrCapacity {
            bgr.deallocate()
            bgr = .allocate(capacity: 3 * n)
            bgrCapacity = 3 * n
        }
    }

    /// Copies `other`'s size and planes into this buffer.
    public func copy(from other: PixelBuffer) {
        resize(width: other.width, height: other.height)
        gray.update(from: other.gray, count: width * height)
        if wantsColor && other.wantsColor { bgr.update(from: other.bgr, count: width * height * 3) }
    }
}

/// A source of frames: a camera, a recorded video or a still image.
///
/// Implementations are used from one thread at a time.
public protocol FrameSource: AnyObject {
    /// What the source is, for messages: a device path or a file path.
    var name: String { get }
    /// True for a live camera (frames arrive in real time), false for a file (read as fast as asked).
    var isLive: Bool { get }
    /// Nominal frames per second, when known (for pacing and status lines).
    var nominalFrameRate: Double? { get }
    /// Reads the next frame into `buffer`, resizing it as needed.
    /// - Returns: the frame's index and timestamps, or `nil` at the end of the input.
    /// - Throws: the source's own error type (`CaptureError`) on a fault; after a throw the source may be
    ///   retried or closed.
    func read(into buffer: PixelBuffer) throws -> FrameInfo?
    /// Releases the device or file. Idempotent.
    func close()
    /// True for a still image: one instant, judged without durations (`winkctl analyze` on a photo).
    var isStill: Bool { get }
    /// Frames dropped so far because they were corrupt (a camera's broken MJPEG frames); 0 for sources
    /// that cannot tell.
    var corruptFramesDropped: Int { get }
    /// How many frames the source is expected to give in all (a video's container says; a still gives 1),
    /// for progress; nil when unknown (a camera, a container that does not say).
    var expectedFrameCount: Int? { get }
    /// Frames taken from the device so far, corrupt ones included (the denominator of
    /// `corruptFramesDropped`); 0 for sources that do not count.
    var framesDequeued: Int { get }
    /// What is wrong with a recording so far, one line without its name, or nil: damaged packets skipped,
    /// reading stopped by an error, or (once read to its end) fewer frames than its container declares.
    /// Frames that decode are still delivered; callers say this once, at the end (`winkctl`: a warning
    /// line; winkd: a `source_damaged` status). Kept after `close()`.
    var damage: String? { get }
}

extension FrameSource {
    /// False: not a still image unless the source says so.
    public var isStill: Bool { false }
    /// nil: unknown unless the source says so.
    public var expectedFrameCount: Int? { nil }
    /// 0: a source that cannot tell.
    public var corruptFramesDropped: Int { 0 }
    /// 0: a source that does not count.
    public var framesDequeued: Int { 0 }
    /// nil: nothing known to be wrong.
    public var damage: String? { nil }
}

/// A monotonic clock in nanoseconds. Real code uses `SystemClock`; tests use `ManualClock`.
public protocol MonotonicClock: Sendable {
    /// Nanoseconds on `CLOCK_MONOTONIC` (or the fake's current reading).
    func nanoseconds() -> UInt64
}

/// `CLOCK_MONOTONIC` from `clock_gettime(2)`; the same clock V4L2 buffer timestamps use.
public struct SystemClock: MonotonicClock {
    /// The system's `CLOCK_MONOTONIC`.
    public init() {}
    /// Nanoseconds on `CLOCK_MONOTONIC` (`clock_gettime(2)`). Thread-safe.
    public func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

/// A clock that moves only when told to. Thread-safe.
public final class ManualClock: MonotonicClock, @unchecked Sendable {
    private var now: UInt64
    private var lock = pthread_mutex_t()
    /// A clock reading `nanoseconds` until advanced.
    public init(nanoseconds: UInt64 = 0) {
        now = nanoseconds
        pthread_mutex_init(&lock, nil)
    }
    /// The current reading, nanoseconds. Thread-safe.
    public func nanoseconds() -> UInt64 {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        return now
    }
    /// Moves the clock forward by `seconds`.
    /// - Precondition: `seconds` is finite and not negative (a monotonic clock does not go back).
    public func advance(seconds: Double) {
        precondition(seconds.isFinite && seconds >= 0, "ManualClock.advance(seconds: \(seconds)): not forward")
        pthread_mutex_lock(&lock)
        now += UInt64(seconds * 1e9)
        pthread_mutex_unlock(&lock)
    }
}
