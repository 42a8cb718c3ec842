@testable import Capture
import Glibc
import WinkCore

/// A scripted V4L2 device behind the `V4L2Syscalls` funnel, standing where libv4l2 stands: it converts
/// to whatever `VIDIOC_S_FMT` asks among the formats libv4l2 would offer, and hands back frames already in
/// that format. Counts every resource call so tests can check nothing leaks.
final class FakeV4L2Device: V4L2Syscalls {
    /// What `VIDIOC_DQBUF` does next.
    enum Step {
        /// A frame: every luma byte is `(fill + x + y) & 0xff`; BGR pixels are (fill, fill+1, fill+2).
        case frame(sequence: UInt32, nanoseconds: UInt64, flags: V4L2BufferFlags = .timestampMonotonic,
                   fill: UInt8 = 0, bytesUsed: Int? = nil)
        /// The call fails with this errno.
        case fail(Int32)
    }

    struct Node {
        var capability: V4L2Capability
        var formats: [V4L2FormatOffer]
        var openError: Int32?
        /// What `deviceAccess` reports for the node (the explanation of an `EACCES`); nil: the real facts.
        var access: DeviceAccess? = nil
    }

    var nodes: [String: Node]
    var script: [Step] = []
    var pollScript: [Bool] = []
    /// Formats `VIDIOC_S_FMT` will deliver besides the native ones (libv4l2's conversions).
    var conversions: [PixelFormat] = [.bgr24, .rgb24, .yuv420]

    private(set) var openCount = 0
    private(set) var closeCount = 0
    private(set) var mapCount = 0
    private(set) var unmapCount = 0
    private(set) var streamOnCount = 0
    private(set) var streamOffCount = 0
    private(set) var pollCount = 0
    private(set) var dequeueCount = 0
    private(set) var requestedFormats: [V4L2ImageFormat] = []
    private(set) var requestedIntervals: [Fraction] = []
    private(set) var format = V4L2ImageFormat(pixelFormat: .grey, width: 0, height: 0)

    private var openNodes: [Int32: Node] = [:]
    private var nextFD: Int32 = 3
    private var memory: [UnsafeMutableRawPointer] = []
    private var bufferLength = 0
    private var queued: [Int] = []
    private var mapped: Set<UnsafeMutableRawPointer> = []

    init(nodes: [String: Node]) { self.nodes = nodes }

    convenience init(path: String = "/dev/video0", card: String = "Fake Cam", formats: [V4L2FormatOffer]) {
        self.init(nodes: [path: Node(capability: Self.captureCapability(card: card), formats: formats)])
    }

    deinit { for block in memory { block.deallocate() } }

    static func captureCapability(card: String = "Fake Cam", caps: V4L2Capabilities = [.videoCapture, .streaming])
        -> V4L2Capability
    {
        V4L2Capability(driver: "uvcvideo", card: card, busInfo: "usb-0000:00:14.0-1",
                       capabilities: [.videoCapture, .metaCapture, .streaming, .deviceCaps], deviceCapabilities: caps)
    }

    /// A format offering discrete sizes, each with the given rates in frames per second.
    static func offer(_ format: PixelFormat, _ description: String, compressed: Bool = false,
                      _ sizes: [(Int, Int, [UInt32])]) -> V4L2FormatOffer
    {
        V4L2FormatOffer(
            format: V4L2FormatEntry(pixelFormat: format, description: description, isCompressed: compressed),
            sizes: sizes.map { w, h, rates in
                V4L2FrameSizeOffer(entry: .discrete(FrameSize(width: w, height: h)),
                                   intervals: rates.map { .discrete(Fraction(1, $0)) })
            })
    }

    /// Every fd opened has been closed and every mapping unmapped.
    var released: Bool { openNodes.isEmpty && mapped.isEmpty && openCount == closeCount }

    private func node(_ fd: Int32) throws(Errno) -> Node {
        guard let node = openNodes[fd] else { throw Errno(code: EBADF) }
        return node
    }

    func open(_ path: String) throws(Errno) -> Int32 {
        guard let node = nodes[path] else { throw Errno(code: ENOENT) }
        if let error = node.openError { throw Errno(code: error) }
        openCount += 1
        nextFD += 1
        openNodes[nextFD] = node
        return nextFD
    }

    func deviceAccess(_ path: String) -> DeviceAccess { nodes[path]?.access ?? DeviceAccess.current(path: path) }

    func close(_ fd: Int32) {
        closeCount += 1
        openNodes[fd] = nil
    }

    func queryCapability(_ fd: Int32) throws(Errno) -> V4L2Capability { try node(fd).capability }

    func enumerateFormat(_ fd: Int32, index: Int) throws(Errno) -> V4L2FormatEntry? {
        let formats = try node(fd).formats
        return index < formats.count ? formats[index].format : nil
    }

    func enumerateFrameSize(_ fd: Int32, pixelFormat: PixelFormat, index: Int) throws(Errno)
        -> V4L2FrameSizeEntry?
    {
        guard let offer = try node(fd).formats.first(where: { $0.format.pixelFormat == pixelFormat }) else {
            throw Errno(code: EINVAL)
        }
        return index < offer.sizes.count ? offer.sizes[index].entry : nil
    }

    func enumerateFrameInterval(_ fd: Int32, pixelFormat: PixelFormat, size: FrameSize, index: Int)
        throws(Errno) -> V4L2FrameIntervalEntry?
    {
        guard let offer = try node(fd).formats.first(where: { $0.format.pixelFormat == pixelFormat }),
              let sizeOffer = offer.sizes.first(where: { $0.candidateSizes.contains(size) })
        else { throw Errno(code: EINVAL) }
        return index < sizeOffer.intervals.count ? sizeOffer.intervals[index] : nil
    }

    func setFormat(_ fd: Int32, _ wanted: V4L2ImageFormat) throws(Errno) -> V4L2ImageFormat {
        let node = try node(fd)
        requestedFormats.append(wanted)
        let native = node.formats.map(\.format.pixelFormat)
        // Like a driver, answer with a format it has when the one asked for is unknown.
        let pixelFormat = native.contains(wanted.pixelFormat) || conversions.contains(wanted.pixelFormat)
            ? wanted.pixelFormat : native[0]
        let bytesPerPixel = pixelFormat == .bgr24 || pixelFormat == .rgb24 ? 3 : 1
        let planeBytes = wanted.width * wanted.height * bytesPerPixel
        format = V4L2ImageFormat(pixelFormat: pixelFormat, width: wanted.width, height: wanted.height,
                                 bytesPerLine: wanted.width * bytesPerPixel,
                                 sizeImage: pixelFormat == .yuv420 ? planeBytes * 3 / 2 : planeBytes)
        return format
    }

    func setFrameInterval(_ fd: Int32, _ interval: Fraction) throws(Errno) -> Fraction {
        _ = try node(fd)
        requestedIntervals.append(interval)
        return interval
    }

    func requestBuffers(_ fd: Int32, count: Int) throws(Errno) -> Int {
        _ = try node(fd)
        precondition(mapped.isEmpty, "REQBUFS while buffers are mapped")
        for block in memory { block.deallocate() }
        memory = []
        queued = []
        bufferLength = format.sizeImage
        for _ in 0..<count { memory.append(.allocate(byteCount: bufferLength, alignment: 16)) }
        return count
    }

    func queryBuffer(_ fd: Int32, index: Int) throws(Errno) -> V4L2BufferLocation {
        _ = try node(fd)
        guard index < memory.count else { throw Errno(code: EINVAL) }
        return V4L2BufferLocation(offset: index * bufferLength, length: bufferLength)
    }

    func queueBuffer(_ fd: Int32, index: Int) throws(Errno) {
        _ = try node(fd)
        guard index < memory.count, !queued.contains(index) else { throw Errno(code: EINVAL) }
        queued.append(index)
    }

    func dequeueBuffer(_ fd: Int32) throws(Errno) -> V4L2DequeuedBuffer {
        _ = try node(fd)
        dequeueCount += 1
        guard !script.isEmpty else { throw Errno(code: EAGAIN) }
        switch script.removeFirst() {
        case .fail(let error):
            throw Errno(code: error)
        case .frame(let sequence, let nanoseconds, let flags, let fill, let bytesUsed):
            guard !queued.isEmpty else { throw Errno(code: EAGAIN) }
            let index = queued.removeFirst()
            Self.paint(memory[index], format: format, fill: fill)
            return V4L2DequeuedBuffer(index: index, bytesUsed: bytesUsed ?? format.sizeImage, flags: flags,
                                      sequence: sequence, timestampNanoseconds: nanoseconds)
        }
    }

    static func paint(_ block: UnsafeMutableRawPointer, format: V4L2ImageFormat, fill: UInt8) {
        let bytes = block.assumingMemoryBound(to: UInt8.self)
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

    func streamOn(_ fd: Int32) throws(Errno) {
        _ = try node(fd)
        streamOnCount += 1
    }

    func streamOff(_ fd: Int32) throws(Errno) {
        _ = try node(fd)
        streamOffCount += 1
        queued = []
    }

    func mapBuffer(_ fd: Int32, length: Int, offset: Int) throws(Errno) -> UnsafeMutableRawPointer {
        _ = try node(fd)
        guard bufferLength > 0, offset % bufferLength == 0, offset / bufferLength < memory.count else {
            throw Errno(code: EINVAL)
        }
        mapCount += 1
        let address = memory[offset / bufferLength]
        mapped.insert(address)
        return address
    }

    func unmapBuffer(_ address: UnsafeMutableRawPointer, length: Int) {
        unmapCount += 1
        mapped.remove(address)
    }

    /// Runs at every poll, e.g. to move a `ManualClock`.
    var onPoll: ((Int32) -> Void)?

    func poll(_ fd: Int32, timeoutMilliseconds: Int32) throws(Errno) -> Bool {
        pollCount += 1
        onPoll?(timeoutMilliseconds)
        return pollScript.isEmpty ? true : pollScript.removeFirst()
    }
}
