import CLinux
import WinkCore
#if canImport(Glibc)
import Glibc
#endif

/// The one funnel every V4L2 system call goes through, so camera logic can run against a scripted fake.
///
/// Each method is exactly one call (`v4l2_open`, one `v4l2_ioctl` request, `v4l2_mmap`, `poll`, ...) and
/// reports failure as the `errno` it left (`Errno`); none retries on `EINTR` (the caller does). The
/// real implementation is `LibV4L2Syscalls`; a fake sits exactly where the `v4l2_*` calls go, so it must
/// return frames already in the format asked for, as libv4l2's conversion would.
///
/// Implementations need not be thread-safe: a camera calls them from one thread at a time.
public protocol V4L2Syscalls: AnyObject {
    /// `v4l2_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)`. - Returns: the file descriptor.
    func open(_ path: String) throws(Errno) -> Int32
    /// `v4l2_close(fd)`.
    func close(_ fd: Int32)
    /// `VIDIOC_QUERYCAP`.
    func queryCapability(_ fd: Int32) throws(Errno) -> V4L2Capability
    /// `VIDIOC_ENUM_FMT` for `V4L2_BUF_TYPE_VIDEO_CAPTURE` at `index`. - Returns: nil past the last one
    /// (the ioctl's `EINVAL`).
    func enumerateFormat(_ fd: Int32, index: Int) throws(Errno) -> V4L2FormatEntry?
    /// `VIDIOC_ENUM_FRAMESIZES` for `pixelFormat` at `index`. - Returns: nil past the last one (`EINVAL`).
    func enumerateFrameSize(_ fd: Int32, pixelFormat: PixelFormat, index: Int) throws(Errno)
        -> V4L2FrameSizeEntry?
    /// `VIDIOC_ENUM_FRAMEINTERVALS` for `pixelFormat` at `size`. - Returns: nil past the last one (`EINVAL`).
    func enumerateFrameInterval(_ fd: Int32, pixelFormat: PixelFormat, size: FrameSize, index: Int)
        throws(Errno) -> V4L2FrameIntervalEntry?
    /// `VIDIOC_S_FMT` (capture, progressive). - Returns: the format the driver (or libv4l2) settled on.
    func setFormat(_ fd: Int32, _ format: V4L2ImageFormat) throws(Errno) -> V4L2ImageFormat
    /// `VIDIOC_S_PARM` with `timeperframe = interval`. - Returns: the interval the driver settled on.
    func setFrameInterval(_ fd: Int32, _ interval: Fraction) throws(Errno) -> Fraction
    /// `VIDIOC_REQBUFS` (`V4L2_MEMORY_MMAP`). - Returns: how many buffers the driver granted.
    func requestBuffers(_ fd: Int32, count: Int) throws(Errno) -> Int
    /// `VIDIOC_QUERYBUF` for buffer `index`.
    func queryBuffer(_ fd: Int32, index: Int) throws(Errno) -> V4L2BufferLocation
    /// `VIDIOC_QBUF`: hands buffer `index` to the driver to fill.
    func queueBuffer(_ fd: Int32, index: Int) throws(Errno)
    /// `VIDIOC_DQBUF`: takes a filled buffer back; `EAGAIN` when none is ready (non-blocking descriptor).
    func dequeueBuffer(_ fd: Int32) throws(Errno) -> V4L2DequeuedBuffer
    /// `VIDIOC_STREAMON`.
    func streamOn(_ fd: Int32) throws(Errno)
    /// `VIDIOC_STREAMOFF` (also returns every buffer to the dequeued state).
    func streamOff(_ fd: Int32) throws(Errno)
    /// `v4l2_mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset)`.
    func mapBuffer(_ fd: Int32, length: Int, offset: Int) throws(Errno) -> UnsafeMutableRawPointer
    /// `v4l2_munmap(address, length)`.
    func unmapBuffer(_ address: UnsafeMutableRawPointer, length: Int)
    /// `poll(2)` for `POLLIN` on `fd`. - Returns: true when the descriptor is readable or flags an error
    /// (`POLLERR`/`POLLHUP`), false when `timeoutMilliseconds` passed first.
    func poll(_ fd: Int32, timeoutMilliseconds: Int32) throws(Errno) -> Bool
    /// Who this process is and what the device at `path` allows (`stat(2)`, `getgroups(2)`, the
    /// environment): read for the line that explains an `EACCES`. Defaults to `DeviceAccess.current`.
    func deviceAccess(_ path: String) -> DeviceAccess
}

extension V4L2Syscalls {
    /// `DeviceAccess.current(path:)`.
    public func deviceAccess(_ path: String) -> DeviceAccess { DeviceAccess.current(path: path) }
}

/// `V4L2Syscalls` on libv4l2 (`v4l2_open`, `v4l2_ioctl`, `v4l2_mmap`, ...) and Glibc `poll`.
///
/// libv4l2 converts from the camera's native format (MJPEG, YUYV, Bayer, ...) to the `BGR24`, `RGB24`,
/// `YUV420` or `YVU420` asked for with `VIDIOC_S_FMT`, and lists those as emulated formats in
/// `VIDIOC_ENUM_FMT`. Stateless; safe to share.
public final class LibV4L2Syscalls: V4L2Syscalls, @unchecked Sendable {
    /// libv4l2's calls.
    public init() {}

    private static let captureType = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue

    @inline(__always)
    private func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) throws(Errno) {
        if CLinux_v4l2_ioctl(fd, request, argument) < 0 { throw Errno(code: errno) }
    }

    /// Runs an enumeration ioctl; `EINVAL` means past the end.
    private func enumerate<T>(_ fd: Int32, _ request: UInt, _ value: inout T) throws(Errno) -> Bool {
        do {
            try withUnsafeMutableBytes(of: &value) { (raw) throws(Errno) in
                try ioctl(fd, request, raw.baseAddress!)
            }
            return true
        } catch where error.code == EINVAL {
            return false
        }
    }

    private func call<T>(_ fd: Int32, _ request: UInt, _ value: inout T) throws(Errno) {
        try withUnsafeMutableBytes(of: &value) { (raw) throws(Errno) in
            try ioctl(fd, request, raw.baseAddress!)
        }
    }

    private static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }

    /// `v4l2_open` with `O_RDWR | O_NONBLOCK | O_CLOEXEC`. - Throws: its `Errno`.
    public func open(_ path: String) throws(Errno) -> Int32 {
        let fd = CLinux_v4l2_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 { throw Errno(code: errno) }
        return fd
    }

    /// `v4l2_close`; its result is ignored.
    public func close(_ fd: Int32) { _ = v4l2_close(fd) }

    /// `VIDIOC_QUERYCAP`. - Throws: the ioctl's `Errno`.
    public func queryCapability(_ fd: Int32) throws(Errno) -> V4L2Capability {
        var cap = v4l2_capability()
        try call(fd, CLinux_VIDIOC_QUERYCAP, &cap)
        return V4L2Capability(driver: Self.string(cap.driver), card: Self.string(cap.card),
                              busInfo: Self.string(cap.bus_info),
                              capabilities: V4L2Capabilities(rawValue: cap.capabilities),
                              deviceCapabilities: V4L2Capabilities(rawValue: cap.device_caps))
    }

    /// `VIDIOC_ENUM_FMT` (capture) at `index`; nil past the last (`EINVAL`). - Throws: any other `Errno`.
    public func enumerateFormat(_ fd: Int32, index: Int) throws(Errno) -> V4L2FormatEntry? {
        var desc = v4l2_fmtdesc()
        desc.index = UInt32(index)
        desc.type = Self.captureType
        guard try enumerate(fd, CLinux_VIDIOC_ENUM_FMT, &desc) else { return nil }
        return V4L2FormatEntry(pixelFormat: PixelFormat(rawValue: desc.pixelformat),
                               description: Self.string(desc.description),
                               isCompressed: desc.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0,
                               isEmulated: desc.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0)
    }

    /// `VIDIOC_ENUM_FRAMESIZES`; a stepwise step of 0 is reported as 1. nil past the last (`EINVAL`).
    /// - Throws: any other `Errno`.
    public func enumerateFrameSize(_ fd: Int32, pixelFormat: PixelFormat, index: Int) throws(Errno)
        -> V4L2FrameSizeEntry?
    {
        var size = v4l2_frmsizeenum()
        size.index = UInt32(index)
        size.pixel_format = pixelFormat.rawValue
        guard try enumerate(fd, CLinux_VIDIOC_ENUM_FRAMESIZES, &size) else { return nil }
        if size.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
            return .discrete(FrameSize(width: Int(size.discrete.width), height: Int(size.discrete.height)))
        }
        let s = size.stepwise
        return .stepwise(minimum: FrameSize(width: Int(s.min_width), height: Int(s.min_height)),
                         maximum: FrameSize(width: Int(s.max_width), height: Int(s.max_height)),
                         step: FrameSize(width: max(1, Int(s.step_width)), height: max(1, Int(s.step_height))))
    }

    /// `VIDIOC_ENUM_FRAMEINTERVALS` at `size`; nil past the last (`EINVAL`). - Throws: any other `Errno`.
    public func enumerateFrameInterval(_ fd: Int32, pixelFormat: PixelFormat, size: FrameSize, index: Int)
        throws(Errno) -> V4L2FrameIntervalEntry?
    {
        var interval = v4l2_frmivalenum()
        interval.index = UInt32(index)
        interval.pixel_format = pixelFormat.rawValue
        interval.width = UInt32(size.width)
        interval.height = UInt32(size.height)
        guard try enumerate(fd, CLinux_VIDIOC_ENUM_FRAMEINTERVALS, &interval) else { return nil }
        if interval.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
            return .discrete(Fraction(interval.discrete.numerator, interval.discrete.denominator))
        }
        let s = interval.stepwise
        return .stepwise(minimum: Fraction(s.min.numerator, s.min.denominator),
                         maximum: Fraction(s.max.numerator, s.max.denominator),
                         step: Fraction(s.step.numerator, s.step.denominator))
    }

    /// `VIDIOC_S_FMT` (capture, progressive) for `format`'s pixel format and size. - Returns: the format set,
    /// with the driver's stride and image size. - Throws: the ioctl's `Errno`.
    public func setFormat(_ fd: Int32, _ format: V4L2ImageFormat) throws(Errno) -> V4L2ImageFormat {
        var f = v4l2_format()
        f.type = Self.captureType
        f.fmt.pix.pixelformat = format.pixelFormat.rawValue
        f.fmt.pix.width = UInt32(format.width)
        f.fmt.pix.height = UInt32(format.height)
        f.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try call(fd, CLinux_VIDIOC_S_FMT, &f)
        return V4L2ImageFormat(pixelFormat: PixelFormat(rawValue: f.fmt.pix.pixelformat),
                               width: Int(f.fmt.pix.width), height: Int(f.fmt.pix.height),
                               bytesPerLine: Int(f.fmt.pix.bytesperline), sizeImage: Int(f.fmt.pix.sizeimage))
    }

    /// `VIDIOC_S_PARM` with `timeperframe = interval` (seconds). - Returns: the interval set.
    /// - Throws: the ioctl's `Errno`.
    public func setFrameInterval(_ fd: Int32, _ interval: Fraction) throws(Errno) -> Fraction {
        var parm = v4l2_streamparm()
        parm.type = Self.captureType
        parm.parm.capture.timeperframe = v4l2_fract(numerator: interval.numerator, denominator: interval.denominator)
        try call(fd, CLinux_VIDIOC_S_PARM, &parm)
        let t = parm.parm.capture.timeperframe
        return Fraction(t.numerator, t.denominator)
    }

    /// `VIDIOC_REQBUFS` for `count` mmap buffers. - Returns: the number granted. - Throws: the ioctl's `Errno`.
    public func requestBuffers(_ fd: Int32, count: Int) throws(Errno) -> Int {
        var request = v4l2_requestbuffers()
        request.count = UInt32(count)
        request.type = Self.captureType
        request.memory = V4L2_MEMORY_MMAP.rawValue
        try call(fd, CLinux_VIDIOC_REQBUFS, &request)
        return Int(request.count)
    }

    private func buffer(index: Int) -> v4l2_buffer {
        var buffer = v4l2_buffer()
        buffer.index = UInt32(index)
        buffer.type = Self.captureType
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        return buffer
    }

    /// `VIDIOC_QUERYBUF`: buffer `index`'s mmap offset and length in bytes. - Throws: the ioctl's `Errno`.
    public func queryBuffer(_ fd: Int32, index: Int) throws(Errno) -> V4L2BufferLocation {
        var b = buffer(index: index)
        try call(fd, CLinux_VIDIOC_QUERYBUF, &b)
        return V4L2BufferLocation(offset: Int(b.m.offset), length: Int(b.length))
    }

    /// `VIDIOC_QBUF` of buffer `index`. - Throws: the ioctl's `Errno`.
    public func queueBuffer(_ fd: Int32, index: Int) throws(Errno) {
        var b = buffer(index: index)
        try call(fd, CLinux_VIDIOC_QBUF, &b)
    }

    /// `VIDIOC_DQBUF`; the buffer's `timeval` is converted to nanoseconds (negative fields read as 0).
    /// - Throws: the ioctl's `Errno` (`EAGAIN` when no buffer is ready).
    public func dequeueBuffer(_ fd: Int32) throws(Errno) -> V4L2DequeuedBuffer {
        var b = buffer(index: 0)
        try call(fd, CLinux_VIDIOC_DQBUF, &b)
        let ns = UInt64(max(0, b.timestamp.tv_sec)) * 1_000_000_000 + UInt64(max(0, b.timestamp.tv_usec)) * 1000
        return V4L2DequeuedBuffer(index: Int(b.index), bytesUsed: Int(b.bytesused),
                                  flags: V4L2BufferFlags(rawValue: b.flags), sequence: b.sequence,
                                  timestampNanoseconds: ns)
    }

    /// `VIDIOC_STREAMON` (capture). - Throws: the ioctl's `Errno`.
    public func streamOn(_ fd: Int32) throws(Errno) {
        var type = Int32(Self.captureType)
        try call(fd, CLinux_VIDIOC_STREAMON, &type)
    }

    /// `VIDIOC_STREAMOFF` (capture). - Throws: the ioctl's `Errno`.
    public func streamOff(_ fd: Int32) throws(Errno) {
        var type = Int32(Self.captureType)
        try call(fd, CLinux_VIDIOC_STREAMOFF, &type)
    }

    /// `v4l2_mmap` of `length` bytes at `offset`, read-write, shared. - Throws: its `Errno` (`MAP_FAILED`).
    public func mapBuffer(_ fd: Int32, length: Int, offset: Int) throws(Errno) -> UnsafeMutableRawPointer {
        let address = v4l2_mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, Int64(offset))
        guard let address, address != MAP_FAILED else { throw Errno(code: errno) }
        return address
    }

    /// `v4l2_munmap`; its result is ignored.
    public func unmapBuffer(_ address: UnsafeMutableRawPointer, length: Int) { _ = v4l2_munmap(address, length) }

    /// `poll(2)` for `POLLIN`, `timeoutMilliseconds` milliseconds. - Returns: true when any event came.
    /// - Throws: its `Errno` (`EINTR` included).
    public func poll(_ fd: Int32, timeoutMilliseconds: Int32) throws(Errno) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let n = Glibc.poll(&descriptor, 1, timeoutMilliseconds)
        if n < 0 { throw Errno(code: errno) }
        return n > 0
    }
}
