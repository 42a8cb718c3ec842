import Capture
import Foundation
import Glibc
import WinkCore

/// A scripted V4L2 device behind the `V4L2Syscalls` funnel, standing where libv4l2 stands: it converts
/// to whatever `VIDIOC_S_FMT` asks among the formats libv4l2 would offer, and hands back frames already in
/// that format. Counts every resource call so tests can check nothing leaks.
///
/// Two uses: the capture tests drive `V4L2Camera` on it call by call (`poll` answers at once), and the
/// daemon tests run a daemon on a camera made from a grey picture (`init(path:picture:)`: frames paced like
/// a 30 fps camera, unplugged and plugged back with `setPresent`). Thread-safe: a test may script it while
/// a capture thread reads it.
public final class FakeV4L2Device: V4L2Syscalls, @unchecked Sendable {
    /// What `VIDIOC_DQBUF` does next.
    public enum Step {
        /// A frame. `sequence` nil: one more than the last frame's; `nanoseconds` nil: `CLOCK_MONOTONIC` now.
        /// Pixels: a flat `level` when given; else the device's picture when it has one; else every luma
        /// byte is `(fill + x + y) & 0xff` and BGR pixels are (fill, fill+1, fill+2). It waits while no
        /// buffer is queued.
        case frame(
            sequence: UInt32? = nil, nanoseconds: UInt64? = nil,
            flags: V4L2BufferFlags = .timestampMonotonic, fill: UInt8 = 0, level: UInt8? = nil,
            bytesUsed: Int? = nil)
        /// The call fails with this errno; `ENODEV` also unplugs the device (see `setPresent`).
        case fail(Int32)
    }

    public struct Node {
        public var capability: V4L2Capability
        public var formats: [V4L2FormatOffer]
        public var openError: Int32?
        /// What `deviceAccess` reports for the node (the explanation of an `EACCES`); nil: the real facts.
        public var access: DeviceAccess?
        /// False while unplugged: `open` fails with `ENOENT`, calls on a descriptor still open with `ENODEV`.
        public var present = true

        public init(
            capability: V4L2Capability, formats: [V4L2FormatOffer], openError: Int32? = nil,
            access: DeviceAccess? = nil
        ) {
            self.capability = capability
            self.formats = formats
            self.openError = openError
            self.access = access
        }
    }

    /// The node the single-camera initialisers create (for `init(nodes:)`, the first path in sorted order):
    /// the one `setPresent`, `isPresent` and `setOpenError` act on.
    public let path: String

    private let lock = NSLock()
    private var state: State
    /// A grey picture (`width` x `height` bytes) that frames show, if any.
    private let picture: (bytes: [UInt8], width: Int, height: Int)?

    /// Everything that changes, guarded by `lock`.
    private struct State {
        var nodes: [String: Node]
        var script: [Step] = []
        var pollScript: [Bool] = []
        var conversions: [PixelFormat] = [.bgr24, .rgb24, .yuv420]
        var paced = false
        var onPoll: ((Int32) -> Void)?

        var openCount = 0
        var closeCount = 0
        var mapCount = 0
        var unmapCount = 0
        var streamOnCount = 0
        var streamOffCount = 0
        var pollCount = 0
        var dequeueCount = 0
        var requestedFormats: [V4L2ImageFormat] = []
        var requestedIntervals: [Fraction] = []
        var format = V4L2ImageFormat(pixelFormat: .grey, width: 0, height: 0)

        var openNodes: [Int32: String] = [:]
        var nextFD: Int32 = 3
        var memory: [UnsafeMutableRawPointer] = []
        var bufferLength = 0
        var queued: [Int] = []
        var mapped: Set<UnsafeMutableRawPointer> = []
        var sequence: UInt32 = 0
    }

    public init(nodes: [String: Node], path: String? = nil) {
        state = State(nodes: nodes)
        self.path = path ?? nodes.keys.sorted().first ?? "/dev/video0"
        picture = nil
    }

    public convenience init(path: String = "/dev/video0", card: String = "Fake Cam", formats: [V4L2FormatOffer]) {
        self.init(nodes: [path: Node(capability: Self.captureCapability(card: card), formats: formats)], path: path)
    }

    /// A grey camera at `path` showing `picture` (its luma) at its size, 30 frames a second: `poll` waits
    /// 33 ms before a scripted step and sleeps out its timeout (50 ms at most) when none is left, like a
    /// camera; it delivers grey whatever format is asked for.
    public init(path: String = "/dev/video7", picture: PixelBuffer) {
        let size = (picture.width, picture.height, [UInt32(30)])
        var state = State(nodes: [
            path: Node(
                capability: Self.captureCapability(card: "Scripted Cam"),
                formats: [Self.offer(.grey, "8-bit Greyscale", [size])])
        ])
        state.conversions = []
        state.paced = true
        self.state = state
        self.path = path
        self.picture = (
            Array(UnsafeBufferPointer(start: picture.gray, count: picture.width * picture.height)),
            picture.width, picture.height
        )
    }

    deinit { for block in state.memory { block.deallocate() } }

    private func locked<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    // MARK: Scripting and inspection

    public var nodes: [String: Node] {
        get { locked { $0.nodes } }
        set { locked { $0.nodes = newValue } }
    }
    /// The steps `VIDIOC_DQBUF` takes, first first; empty: it fails with `EAGAIN`.
    public var script: [Step] {
        get { locked { $0.script } }
        set { locked { $0.script = newValue } }
    }
    /// Appends `steps` to the script.
    public func script(_ steps: [Step]) { locked { $0.script += steps } }
    /// What the next polls answer, before any other rule.
    public var pollScript: [Bool] {
        get { locked { $0.pollScript } }
        set { locked { $0.pollScript = newValue } }
    }
    /// Formats `VIDIOC_S_FMT` will deliver besides the native ones (libv4l2's conversions).
    public var conversions: [PixelFormat] {
        get { locked { $0.conversions } }
        set { locked { $0.conversions = newValue } }
    }
    /// Runs at every poll, e.g. to move a `ManualClock`.
    public var onPoll: ((Int32) -> Void)? {
        get { locked { $0.onPoll } }
        set { locked { $0.onPoll = newValue } }
    }

    /// Unplugs (`false`) or plugs back `path`.
    public func setPresent(_ present: Bool) { locked { $0.nodes[path]?.present = present } }
    public var isPresent: Bool { locked { $0.nodes[path]?.present ?? false } }
    /// Makes opening `path` fail with `error` (nil: succeed).
    public func setOpenError(_ error: Int32?) { locked { $0.nodes[path]?.openError = error } }

    public var openCount: Int { locked { $0.openCount } }
    public var closeCount: Int { locked { $0.closeCount } }
    public var mapCount: Int { locked { $0.mapCount } }
    public var unmapCount: Int { locked { $0.unmapCount } }
    public var streamOnCount: Int { locked { $0.streamOnCount } }
    public var streamOffCount: Int { locked { $0.streamOffCount } }
    public var pollCount: Int { locked { $0.pollCount } }
    public var dequeueCount: Int { locked { $0.dequeueCount } }
    public var requestedFormats: [V4L2ImageFormat] { locked { $0.requestedFormats } }
    public var requestedIntervals: [Fraction] { locked { $0.requestedIntervals } }
    /// The format last set.
    public var format: V4L2ImageFormat { locked { $0.format } }

    /// Every fd opened has been closed and every mapping unmapped.
    public var released: Bool { locked { $0.openNodes.isEmpty && $0.mapped.isEmpty && $0.openCount == $0.closeCount } }

    public static func captureCapability(
        card: String = "Fake Cam", caps: V4L2Capabilities = [.videoCapture, .streaming]
    )
        -> V4L2Capability
    {
        V4L2Capability(
            driver: "uvcvideo", card: card, busInfo: "usb-0000:00:14.0-1",
            capabilities: [.videoCapture, .metaCapture, .streaming, .deviceCaps], deviceCapabilities: caps)
    }

    /// A format offering discrete sizes, each with the given rates in frames per second.
    public static func offer(
        _ format: PixelFormat, _ description: String, compressed: Bool = false,
        _ sizes: [(Int, Int, [UInt32])]
    ) -> V4L2FormatOffer {
        V4L2FormatOffer(
            format: V4L2FormatEntry(pixelFormat: format, description: description, isCompressed: compressed),
            sizes: sizes.map { w, h, rates in
                V4L2FrameSizeOffer(
                    entry: .discrete(FrameSize(width: w, height: h)),
                    intervals: rates.map { .discrete(Fraction(1, $0)) })
            })
    }

    // MARK: V4L2Syscalls

    /// The node open at `fd`: `EBADF` when none is, `ENODEV` when it was unplugged.
    private static func node(_ fd: Int32, _ state: State) throws(Errno) -> Node {
        guard let path = state.openNodes[fd] else { throw Errno(code: EBADF) }
        guard let node = state.nodes[path], node.present else { throw Errno(code: ENODEV) }
        return node
    }

    /// `body` under the lock, after checking that `fd` is open on a present node.
    private func withNode<T>(_ fd: Int32, _ body: (Node, inout State) throws(Errno) -> T) throws(Errno) -> T {
        lock.lock()
        defer { lock.unlock() }
        let node = try Self.node(fd, state)
        return try body(node, &state)
    }

    public func open(_ path: String) throws(Errno) -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        guard let node = state.nodes[path], node.present else { throw Errno(code: ENOENT) }
        if let error = node.openError { throw Errno(code: error) }
        state.openCount += 1
        state.nextFD += 1
        state.openNodes[state.nextFD] = path
        return state.nextFD
    }

    public func deviceAccess(_ path: String) -> DeviceAccess {
        locked { $0.nodes[path]?.access } ?? DeviceAccess.current(path: path)
    }

    public func close(_ fd: Int32) {
        locked {
            $0.closeCount += 1
            $0.openNodes[fd] = nil
        }
    }

    public func queryCapability(_ fd: Int32) throws(Errno) -> V4L2Capability {
        try withNode(fd) { node, _ in node.capability }
    }

    public func enumerateFormat(_ fd: Int32, index: Int) throws(Errno) -> V4L2FormatEntry? {
        try withNode(fd) { node, _ in index < node.formats.count ? node.formats[index].format : nil }
    }

    public func enumerateFrameSize(_ fd: Int32, pixelFormat: PixelFormat, index: Int) throws(Errno)
        -> V4L2FrameSizeEntry?
    {
        try withNode(fd) { node, _ throws(Errno) in
            guard let offer = node.formats.first(where: { $0.format.pixelFormat == pixelFormat }) else {
                throw Errno(code: EINVAL)
            }
            return index < offer.sizes.count ? offer.sizes[index].entry : nil
        }
    }

    public func enumerateFrameInterval(_ fd: Int32, pixelFormat: PixelFormat, size: FrameSize, index: Int)
        throws(Errno) -> V4L2FrameIntervalEntry?
    {
        try withNode(fd) { node, _ throws(Errno) in
            guard let offer = node.formats.first(where: { $0.format.pixelFormat == pixelFormat }),
                let sizeOffer = offer.sizes.first(where: { $0.candidateSizes.contains(size) })
            else { throw Errno(code: EINVAL) }
            return index < sizeOffer.intervals.count ? sizeOffer.intervals[index] : nil
        }
    }

    public func setFormat(_ fd: Int32, _ wanted: V4L2ImageFormat) throws(Errno) -> V4L2ImageFormat {
        try withNode(fd) { node, state in
            state.requestedFormats.append(wanted)
            let native = node.formats.map(\.format.pixelFormat)
            // Like a driver, answer with a format it has when the one asked for is unknown.
            let pixelFormat =
                native.contains(wanted.pixelFormat) || state.conversions.contains(wanted.pixelFormat)
                ? wanted.pixelFormat : native[0]
            let bytesPerPixel = pixelFormat == .bgr24 || pixelFormat == .rgb24 ? 3 : 1
            let planeBytes = wanted.width * wanted.height * bytesPerPixel
            state.format = V4L2ImageFormat(
                pixelFormat: pixelFormat, width: wanted.width, height: wanted.height,
                bytesPerLine: wanted.width * bytesPerPixel,
                sizeImage: pixelFormat == .yuv420 ? planeBytes * 3 / 2 : planeBytes)
            return state.format
        }
    }

    public func setFrameInterval(_ fd: Int32, _ interval: Fraction) throws(Errno) -> Fraction {
        try withNode(fd) { _, state in
            state.requestedIntervals.append(interval)
            return interval
        }
    }

    public func requestBuffers(_ fd: Int32, count: Int) throws(Errno) -> Int {
        try withNode(fd) { _, state in
            precondition(state.mapped.isEmpty, "REQBUFS while buffers are mapped")
            for block in state.memory { block.deallocate() }
            state.memory = []
            state.queued = []
            state.bufferLength = state.format.sizeImage
            for _ in 0..<count { state.memory.append(.allocate(byteCount: state.bufferLength, alignment: 16)) }
            return count
        }
    }

    public func queryBuffer(_ fd: Int32, index: Int) throws(Errno) -> V4L2BufferLocation {
        try withNode(fd) { _, state throws(Errno) in
            guard index < state.memory.count else { throw Errno(code: EINVAL) }
            return V4L2BufferLocation(offset: index * state.bufferLength, length: state.bufferLength)
        }
    }

    public func queueBuffer(_ fd: Int32, index: Int) throws(Errno) {
        try withNode(fd) { _, state throws(Errno) in
            guard index < state.memory.count, !state.queued.contains(index) else { throw Errno(code: EINVAL) }
            state.queued.append(index)
        }
    }

    public func dequeueBuffer(_ fd: Int32) throws(Errno) -> V4L2DequeuedBuffer {
        try withNode(fd) { _, state throws(Errno) in
            state.dequeueCount += 1
            guard let step = state.script.first else { throw Errno(code: EAGAIN) }
            switch step {
            case .fail(let error):
                state.script.removeFirst()
                if error == ENODEV, let path = state.openNodes[fd] { state.nodes[path]?.present = false }
                throw Errno(code: error)
            case .frame(let sequence, let nanoseconds, let flags, let fill, let level, let bytesUsed):
                guard !state.queued.isEmpty else { throw Errno(code: EAGAIN) }
                state.script.removeFirst()
                let index = state.queued.removeFirst()
                paint(state.memory[index], format: state.format, fill: fill, level: level)
                state.sequence = sequence ?? state.sequence &+ 1
                return V4L2DequeuedBuffer(
                    index: index, bytesUsed: bytesUsed ?? state.format.sizeImage, flags: flags,
                    sequence: state.sequence,
                    timestampNanoseconds: nanoseconds ?? Self.monotonicNanoseconds())
            }
        }
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Fills a buffer as `Step.frame` says.
    private func paint(_ block: UnsafeMutableRawPointer, format: V4L2ImageFormat, fill: UInt8, level: UInt8?) {
        let bytes = block.assumingMemoryBound(to: UInt8.self)
        if let level {
            bytes.update(repeating: level, count: format.sizeImage)
        } else if let picture {
            for y in 0..<min(format.height, picture.height) {
                let row = min(format.width, picture.width)
                picture.bytes.withUnsafeBufferPointer {
                    (bytes + y * format.bytesPerLine).update(from: $0.baseAddress! + y * picture.width, count: row)
                }
            }
        } else {
            for y in 0..<format.height {
                for x in 0..<format.width {
                    if format.pixelFormat == .bgr24 {
                        let p = bytes + y * format.bytesPerLine + 3 * x
                        p[0] = fill
                        p[1] = fill &+ 1
                        p[2] = fill &+ 2
                    } else {
                        bytes[y * format.bytesPerLine + x] = UInt8(truncatingIfNeeded: Int(fill) + x + y)
                    }
                }
            }
        }
    }

    public func streamOn(_ fd: Int32) throws(Errno) {
        try withNode(fd) { _, state in state.streamOnCount += 1 }
    }

    public func streamOff(_ fd: Int32) throws(Errno) {
        try withNode(fd) { _, state in
            state.streamOffCount += 1
            state.queued = []
        }
    }

    public func mapBuffer(_ fd: Int32, length: Int, offset: Int) throws(Errno) -> UnsafeMutableRawPointer {
        try withNode(fd) { _, state throws(Errno) in
            guard state.bufferLength > 0, offset % state.bufferLength == 0,
                offset / state.bufferLength < state.memory.count
            else { throw Errno(code: EINVAL) }
            state.mapCount += 1
            let address = state.memory[offset / state.bufferLength]
            state.mapped.insert(address)
            return address
        }
    }

    public func unmapBuffer(_ address: UnsafeMutableRawPointer, length: Int) {
        locked {
            $0.unmapCount += 1
            $0.mapped.remove(address)
        }
    }

    /// The next `pollScript` answer if any; else ready at once, or, paced like a camera, ready after 33 ms
    /// when a step waits and not ready after the timeout (50 ms at most) when none does.
    public func poll(_ fd: Int32, timeoutMilliseconds: Int32) throws(Errno) -> Bool {
        let (onPoll, scripted, paced, stepWaits) = locked { state in
            state.pollCount += 1
            let scripted = state.pollScript.isEmpty ? nil : state.pollScript.removeFirst()
            return (state.onPoll, scripted, state.paced, !state.script.isEmpty)
        }
        onPoll?(timeoutMilliseconds)
        if let scripted { return scripted }
        guard paced else { return true }
        if stepWaits {
            usleep(33_000)
            return true
        }
        usleep(UInt32(min(timeoutMilliseconds, 50)) * 1000)
        return false
    }
}
