import WinkCore

#if canImport(Glibc)
    import Glibc
#endif

/// A live V4L2 camera read through libv4l2 with mmap streaming I/O.
///
/// Opening queries the capabilities (`V4L2_CAP_VIDEO_CAPTURE` and `V4L2_CAP_STREAMING` are required),
/// enumerates formats, sizes and frame intervals, picks a size (`Settings`), and asks libv4l2 for a format
/// it converts to from whatever the camera sends (MJPEG, YUYV, ...): `GREY` when the camera offers it,
/// else `YUV420` ("YU12", whose first plane is the luma image); `BGR24` while colour is wanted
/// (`PixelBuffer.wantsColor`; the grey plane is then computed with the BT.601 luma weights
/// 0.299 R + 0.587 G + 0.114 B). Switching colour on or off between reads restarts the stream.
///
/// Each `read` waits with `poll(2)` up to `Settings.timeout` and dequeues one buffer. Buffers flagged
/// `V4L2_BUF_FLAG_ERROR`, empty, or shorter than one image are dropped and counted (`corruptFramesDropped`).
/// Timestamps come from the driver (`CLOCK_MONOTONIC` when the buffer says so, else `clock` at dequeue).
///
/// The descriptor and the mapped buffers are released by `close()` or, at the latest, by `deinit`; after
/// the camera disappears (`ENODEV`) they are released at once. Not thread-safe: use from one thread.
public final class V4L2Camera: FrameSource {
    /// What to ask of the camera.
    public struct Settings: Sendable, Equatable {
        /// Exact size wanted in pixels; nil (both) for the largest offered within `maximumWidth` x
        /// `maximumHeight` that reaches `framesPerSecond`. When the exact size is not offered, the nearest
        /// offered one is used.
        public var width: Int?
        /// Exact height wanted in pixels; see `width`.
        public var height: Int?
        /// Upper bound for the automatic size choice, in pixels (default 640x480).
        public var maximumWidth: Int
        /// Upper bound for the automatic height choice, in pixels; see `maximumWidth`.
        public var maximumHeight: Int
        /// Frames per second wanted (default 30).
        public var framesPerSecond: Double
        /// Seconds `read` waits for a frame before throwing `.timeout` (default 2).
        public var timeout: Double
        /// How many mmap buffers to request (default 4; the driver may grant more or fewer).
        public var bufferCount: Int

        /// Settings; sizes in pixels, `framesPerSecond` in frames a second, `timeout` in seconds.
        public init(
            width: Int? = nil, height: Int? = nil, maximumWidth: Int = 640, maximumHeight: Int = 480,
            framesPerSecond: Double = 30, timeout: Double = 2, bufferCount: Int = 4
        ) {
            self.width = width
            self.height = height
            self.maximumWidth = maximumWidth
            self.maximumHeight = maximumHeight
            self.framesPerSecond = framesPerSecond
            self.timeout = timeout
            self.bufferCount = bufferCount
        }
    }

    /// The path the camera was opened with (a `/dev/v4l/by-id/...` name or `/dev/videoN`).
    public let name: String
    /// True: a live camera.
    public let isLive = true
    /// The frame rate the driver settled on, when it reports one.
    public private(set) var nominalFrameRate: Double?
    /// Driver and card name from `VIDIOC_QUERYCAP`.
    public let capability: V4L2Capability
    /// Every format the device offers, with sizes and rates (emulated libv4l2 formats included).
    public let offers: [V4L2FormatOffer]
    /// The format being streamed (after the driver's adjustments).
    public private(set) var format: V4L2ImageFormat
    /// Buffers dequeued so far, corrupt ones included.
    public private(set) var framesDequeued = 0
    /// Buffers dropped as corrupt (`V4L2_BUF_FLAG_ERROR`, no data, or too short).
    public private(set) var corruptFramesDropped = 0
    /// Frames the driver dropped, from gaps in the buffers' `sequence` numbers.
    public private(set) var droppedFrames = 0

    private let settings: Settings
    private let syscalls: any V4L2Syscalls
    private let clock: any MonotonicClock
    private let size: FrameSize
    private var fd: Int32 = -1
    private var mappings: [(address: UnsafeMutableRawPointer, length: Int)] = []
    private var streaming = false
    private var color = false
    private var firstNanoseconds: UInt64?
    private var lastSequence: UInt32?
    private var terminalError: CaptureError?

    /// Opens `path` and starts streaming.
    /// - Parameters:
    ///   - wantsColor: start in `BGR24` (else grey); the stream switches when a read's buffer differs.
    ///   - syscalls: the system-call funnel (`LibV4L2Syscalls()`; a fake in tests).
    ///   - clock: for timestamps of buffers without a monotonic timestamp and for the read timeout.
    /// - Throws: `CaptureError`: `.missing` (exit 66) when `path` does not exist, `.unreadable` (66)
    ///   without permission, `.busy` (69) when another program streams from it, `.unsupported` (69) for a
    ///   node that is not a streaming capture device or offers no usable format, `.disconnected` (69) on
    ///   `ENODEV`/`EIO`, `.system` (69) for any other failure.
    public init(
        path: String, settings: Settings = Settings(), wantsColor: Bool = false,
        syscalls: any V4L2Syscalls = LibV4L2Syscalls(), clock: any MonotonicClock = SystemClock()
    ) throws {
        name = path
        self.settings = settings
        self.syscalls = syscalls
        self.clock = clock
        let fd: Int32
        do {
            fd = try retryingOnInterrupt { () throws(Errno) in try syscalls.open(path) }
        } catch {
            // libv4l2's open queries the capabilities itself and fails with ENOTTY on a non-V4L2 file.
            if error.code == ENOTTY {
                throw CaptureError(.unsupported, subject: path, reason: "not a V4L2 device")
            }
            throw Self.error(error, path: path, during: "open", access: syscalls.deviceAccess)
        }
        do {
            capability = try retryingOnInterrupt { () throws(Errno) in try syscalls.queryCapability(fd) }
            let caps = capability.nodeCapabilities
            guard caps.contains(.videoCapture) else {
                syscalls.close(fd)
                throw CaptureError(
                    .unsupported, subject: path,
                    reason: "not a video capture device (\(capability.card), a metadata or output node?)")
            }
            guard caps.contains(.streaming) else {
                syscalls.close(fd)
                throw CaptureError(
                    .unsupported, subject: path,
                    reason: "\(capability.card) does not support streaming I/O")
            }
            offers = try V4L2FormatOffer.enumerate(fd, syscalls: syscalls)
        } catch let error as Errno {
            syscalls.close(fd)
            if error.code == ENOTTY || error.code == EINVAL {
                throw CaptureError(.unsupported, subject: path, reason: "not a V4L2 device")
            }
            throw Self.error(
                error, path: path, during: "VIDIOC_QUERYCAP/VIDIOC_ENUM_FMT", access: syscalls.deviceAccess)
        }
        let native = offers.filter { !$0.format.isEmulated }
        guard !native.isEmpty else {
            syscalls.close(fd)
            throw CaptureError(.unsupported, subject: path, reason: "\(capability.card) offers no capture format")
        }
        size = Self.chooseSize(native, settings: settings)
        format = V4L2ImageFormat(pixelFormat: .grey, width: size.width, height: size.height)
        self.fd = fd
        do {
            try startStreaming(color: wantsColor)
        } catch {
            release()
            throw error
        }
    }

    deinit { release() }

    /// The grey-mode format to ask libv4l2 for: `GREY` when the camera sends it, else `YUV420`.
    var greyFormat: PixelFormat {
        offers.contains { !$0.format.isEmulated && $0.format.pixelFormat == .grey } ? .grey : .yuv420
    }

    // MARK: Streaming

    /// `VIDIOC_S_FMT`, `VIDIOC_S_PARM`, `VIDIOC_REQBUFS`, `VIDIOC_QUERYBUF` + mmap, `VIDIOC_QBUF`, `VIDIOC_STREAMON`.
    private func startStreaming(color: Bool) throws {
        let wanted = color ? PixelFormat.bgr24 : greyFormat
        let granted = try ioctl("VIDIOC_S_FMT") { () throws(Errno) in
            try syscalls.setFormat(fd, V4L2ImageFormat(pixelFormat: wanted, width: size.width, height: size.height))
        }
        guard granted.pixelFormat == wanted, granted.width > 0, granted.height > 0 else {
            let offered = offers.filter { !$0.format.isEmulated }.map(\.format.pixelFormat.fourCC)
            throw CaptureError(
                .unsupported, subject: name,
                reason: "libv4l2 cannot deliver \(wanted) from \(offered.joined(separator: ", "))"
                    + " (got \(granted.pixelFormat))")
        }
        format = granted
        self.color = color
        nominalFrameRate = try frameRate()

        let count = try ioctl("VIDIOC_REQBUFS") { () throws(Errno) in
            try syscalls.requestBuffers(fd, count: settings.bufferCount)
        }
        guard count > 0 else {
            throw CaptureError(.unsupported, subject: name, reason: "driver granted no mmap buffers")
        }
        for index in 0..<count {
            let location = try ioctl("VIDIOC_QUERYBUF") { () throws(Errno) in
                try syscalls.queryBuffer(fd, index: index)
            }
            let address = try ioctl("mmap") { () throws(Errno) in
                try syscalls.mapBuffer(fd, length: location.length, offset: location.offset)
            }
            mappings.append((address, location.length))
        }
        for index in 0..<count {
            try ioctl("VIDIOC_QBUF") { () throws(Errno) in try syscalls.queueBuffer(fd, index: index) }
        }
        try ioctl("VIDIOC_STREAMON") { () throws(Errno) in try syscalls.streamOn(fd) }
        streaming = true
    }

    /// Asks for `Settings.framesPerSecond` with `VIDIOC_S_PARM`; a driver without it (`EINVAL`, `ENOTTY`)
    /// keeps its own rate. - Returns: the rate the driver reports, or nil.
    private func frameRate() throws -> Double? {
        let fps = settings.framesPerSecond
        guard fps > 0 else { return nil }
        let wanted = fps == fps.rounded() ? Fraction(1, UInt32(fps)) : Fraction(1000, UInt32((fps * 1000).rounded()))
        do {
            let got = try retryingOnInterrupt { () throws(Errno) in try syscalls.setFrameInterval(fd, wanted) }
            return got.numerator > 0 && got.denominator > 0 ? got.framesPerSecond : nil
        } catch  where error.code == EINVAL || error.code == ENOTTY {
            return nil
        } catch {
            throw Self.error(error, path: name, during: "VIDIOC_S_PARM", access: syscalls.deviceAccess)
        }
    }

    /// STREAMOFF, unmap every buffer and free them with `VIDIOC_REQBUFS(0)`, keeping the descriptor.
    private func stopStreaming() throws {
        if streaming {
            streaming = false
            try ioctl("VIDIOC_STREAMOFF") { () throws(Errno) in try syscalls.streamOff(fd) }
        }
        unmapAll()
        _ = try ioctl("VIDIOC_REQBUFS") { () throws(Errno) in try syscalls.requestBuffers(fd, count: 0) }
    }

    private func unmapAll() {
        for mapping in mappings { syscalls.unmapBuffer(mapping.address, length: mapping.length) }
        mappings.removeAll()
    }

    /// Stops streaming (errors ignored: the device may be gone), unmaps every buffer, closes the descriptor.
    private func release() {
        guard fd >= 0 else { return }
        if streaming {
            streaming = false
            _ = try? retryingOnInterrupt { () throws(Errno) in try syscalls.streamOff(fd) }
        }
        unmapAll()
        syscalls.close(fd)
        fd = -1
    }

    /// Runs one call, retrying `EINTR`, and turns its failure into a `CaptureError`; a vanished device
    /// releases everything at once.
    private func ioctl<T>(_ what: String, _ body: () throws(Errno) -> T) throws -> T {
        do {
            return try retryingOnInterrupt(body)
        } catch {
            let failure = Self.error(error, path: name, during: what, access: syscalls.deviceAccess)
            if failure.code == .disconnected {
                terminalError = failure
                release()
            }
            throw failure
        }
    }

    // MARK: FrameSource

    /// Waits for the next frame and copies it into `buffer` (resized to the camera's size).
    /// - Returns: the frame's index (buffers dequeued so far, minus one), its time in seconds since the
    ///   first frame and its `CLOCK_MONOTONIC` capture time in nanoseconds; nil after `close()`.
    /// - Throws: `CaptureError` `.timeout` when no frame arrives within `Settings.timeout`,
    ///   `.disconnected` when the camera went away (the camera is then released, and every later read
    ///   throws the same error), `.unsupported` if switching colour fails, `.system` otherwise.
    public func read(into buffer: PixelBuffer) throws -> FrameInfo? {
        if let terminalError { throw terminalError }
        guard fd >= 0 else { return nil }
        if buffer.wantsColor != color {
            try stopStreaming()
            try startStreaming(color: buffer.wantsColor)
        }
        let deadline = clock.nanoseconds() + UInt64(max(0, settings.timeout) * 1e9)
        let timedOut = CaptureError(
            .timeout, subject: name,
            reason: "no frame within \(settings.timeout) s (\(capability.card))")
        var first = true
        while true {
            let now = clock.nanoseconds()
            // Spurious wake-ups (poll ready, DQBUF EAGAIN) must not outlast the deadline.
            if !first && now >= deadline { throw timedOut }
            first = false
            let remaining =
                deadline > now ? Int32(min(Double(Int32.max), Double(deadline - now) / 1e6).rounded(.up)) : 0
            let ready = try ioctl("poll") { () throws(Errno) in
                try syscalls.poll(fd, timeoutMilliseconds: remaining)
            }
            guard ready else { throw timedOut }
            let dequeued: V4L2DequeuedBuffer
            do {
                dequeued = try ioctl("VIDIOC_DQBUF") { () throws(Errno) in try syscalls.dequeueBuffer(fd) }
            } catch let error as CaptureError where error.code == .system(errno: EAGAIN) {
                continue
            }
            if let info = try deliver(dequeued, into: buffer) { return info }
        }
    }

    /// Copies a dequeued buffer into `buffer` and queues it again. - Returns: nil for a corrupt buffer.
    private func deliver(_ dequeued: V4L2DequeuedBuffer, into buffer: PixelBuffer) throws -> FrameInfo? {
        framesDequeued += 1
        if let lastSequence, dequeued.sequence > lastSequence &+ 1 {
            droppedFrames += Int(dequeued.sequence - lastSequence - 1)
        }
        lastSequence = dequeued.sequence
        defer { _ = try? requeue(dequeued.index) }
        let bytesPerPixel = color ? 3 : 1
        let stride = max(format.bytesPerLine, format.width * bytesPerPixel)
        let needed = stride * (format.height - 1) + format.width * bytesPerPixel
        guard dequeued.index >= 0, dequeued.index < mappings.count else {
            throw CaptureError(.internal, subject: name, reason: "driver returned unknown buffer \(dequeued.index)")
        }
        let mapping = mappings[dequeued.index]
        guard !dequeued.flags.contains(.error), dequeued.bytesUsed > 0, dequeued.bytesUsed >= needed,
            mapping.length >= needed
        else {
            corruptFramesDropped += 1
            return nil
        }
        copy(from: UnsafeRawPointer(mapping.address), stride: stride, into: buffer)
        let nanoseconds = dequeued.flags.hasMonotonicTimestamp ? dequeued.timestampNanoseconds : clock.nanoseconds()
        let first = firstNanoseconds ?? nanoseconds
        firstNanoseconds = first
        let time = nanoseconds >= first ? Double(nanoseconds - first) / 1e9 : 0
        return FrameInfo(index: framesDequeued - 1, time: time, monotonicNanoseconds: nanoseconds)
    }

    private func requeue(_ index: Int) throws {
        guard fd >= 0 else { return }
        try ioctl("VIDIOC_QBUF") { () throws(Errno) in try syscalls.queueBuffer(fd, index: index) }
    }

    /// Copies the plane: grey rows for `GREY`/`YUV420` (the Y plane comes first), or BGR rows plus BT.601 luma.
    private func copy(from source: UnsafeRawPointer, stride: Int, into buffer: PixelBuffer) {
        let width = format.width
        let height = format.height
        buffer.resize(width: width, height: height)
        let bytes = source.assumingMemoryBound(to: UInt8.self)
        if !color {
            for row in 0..<height {
                (buffer.gray + row * width).update(from: bytes + row * stride, count: width)
            }
            return
        }
        for row in 0..<height {
            let line = bytes + row * stride
            (buffer.bgr + row * width * 3).update(from: line, count: width * 3)
            let grey = buffer.gray + row * width
            for x in 0..<width {
                // BT.601 luma in 8-bit fixed point: 0.114 B + 0.587 G + 0.299 R, weights x 256 = 29, 150, 77.
                let b = UInt32(line[3 * x])
                let g = UInt32(line[3 * x + 1])
                let r = UInt32(line[3 * x + 2])
                grey[x] = UInt8((29 * b + 150 * g + 77 * r + 128) >> 8)
            }
        }
    }

    /// Stops streaming, unmaps every buffer and closes the device. Idempotent; later reads return nil.
    public func close() {
        release()
    }

    // MARK: Errors

    /// The `CaptureError` for a failed call on `path`: `ENOENT` -> `.missing`, `EACCES`/`EPERM` ->
    /// `.unreadable`, `EBUSY` -> `.busy`, `ENODEV`/`ENXIO`/`EIO` -> `.disconnected`, others -> `.system`.
    /// - Parameter access: what explains a permission error (`DeviceAccess.explanation`): the process's
    ///   uid and groups, the device's owner, group and mode, systemd's device filter; read only then.
    static func error(
        _ error: Errno, path: String, during operation: String,
        access: ((String) -> DeviceAccess)? = nil
    ) -> CaptureError {
        switch error.code {
        case ENOENT: CaptureError(.missing, subject: path, reason: "no such device")
        case EACCES, EPERM:
            CaptureError(
                .unreadable, subject: path,
                reason: (access ?? { DeviceAccess.current(path: $0) })(path).explanation())
        case EBUSY: CaptureError(.busy, subject: path, reason: "camera is in use by another program (\(operation))")
        case ENODEV, ENXIO, EIO:
            CaptureError(.disconnected, subject: path, reason: "camera disconnected (\(operation): \(error))")
        default: CaptureError(.system(errno: error.code), subject: path, reason: "\(operation) failed: \(error)")
        }
    }
}
