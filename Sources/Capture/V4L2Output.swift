import CLinux
import WinkCore

#if canImport(Glibc)
    import Glibc
#endif

/// The few system calls a V4L2 output device needs, so `V4L2Output` can run against a fake.
///
/// Each method is one call and reports failure as its `errno`; none retries on `EINTR`. The real
/// implementation is `KernelV4L2OutputSyscalls`. Need not be thread-safe.
public protocol V4L2OutputSyscalls: AnyObject {
    /// `open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)`. - Returns: the file descriptor.
    func open(_ path: String) throws(Errno) -> Int32
    /// `close(fd)`.
    func close(_ fd: Int32)
    /// `VIDIOC_QUERYCAP`.
    func queryCapability(_ fd: Int32) throws(Errno) -> V4L2Capability
    /// `VIDIOC_S_FMT` with `V4L2_BUF_TYPE_VIDEO_OUTPUT`, progressive. - Returns: the format the driver set.
    func setOutputFormat(_ fd: Int32, _ format: V4L2ImageFormat) throws(Errno) -> V4L2ImageFormat
    /// `write(fd, bytes, count)`. - Returns: the bytes written.
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int
    /// Who this process is and what the device at `path` allows, for the line explaining an `EACCES`.
    func deviceAccess(_ path: String) -> DeviceAccess
}

extension V4L2OutputSyscalls {
    /// `DeviceAccess.current(path:)`.
    public func deviceAccess(_ path: String) -> DeviceAccess { DeviceAccess.current(path: path) }
}

extension V4L2Capabilities {
    /// `V4L2_CAP_VIDEO_OUTPUT`: a single-planar video output device (e.g. v4l2loopback's writer side).
    public static let videoOutput = V4L2Capabilities(rawValue: 0x0000_0002)
}

/// `V4L2OutputSyscalls` on the kernel (`open(2)`, `ioctl(2)` through `v4l2_ioctl`, which passes a descriptor
/// libv4l2 did not open straight to the kernel, `write(2)`). Stateless; safe to share.
public final class KernelV4L2OutputSyscalls: V4L2OutputSyscalls, @unchecked Sendable {
    /// The kernel's calls.
    public init() {}

    /// `open(2)` with `O_RDWR | O_NONBLOCK | O_CLOEXEC`. - Throws: its `Errno`.
    public func open(_ path: String) throws(Errno) -> Int32 {
        let fd = Glibc.open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 { throw Errno(code: errno) }
        return fd
    }

    /// `close(2)`; its result is ignored.
    public func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// `VIDIOC_QUERYCAP` (as `LibV4L2Syscalls`). - Throws: the ioctl's `Errno`.
    public func queryCapability(_ fd: Int32) throws(Errno) -> V4L2Capability {
        try LibV4L2Syscalls().queryCapability(fd)
    }

    /// `VIDIOC_S_FMT` for `V4L2_BUF_TYPE_VIDEO_OUTPUT`, progressive, sRGB, with `format`'s size, stride and image
    /// size. - Returns: the format the driver set. - Throws: the ioctl's `Errno`.
    public func setOutputFormat(_ fd: Int32, _ format: V4L2ImageFormat) throws(Errno) -> V4L2ImageFormat {
        var f = v4l2_format()
        f.type = V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue
        f.fmt.pix.pixelformat = format.pixelFormat.rawValue
        f.fmt.pix.width = UInt32(format.width)
        f.fmt.pix.height = UInt32(format.height)
        f.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        f.fmt.pix.bytesperline = UInt32(format.bytesPerLine)
        f.fmt.pix.sizeimage = UInt32(format.sizeImage)
        f.fmt.pix.colorspace = V4L2_COLORSPACE_SRGB.rawValue
        if CLinux_v4l2_ioctl(fd, CLinux_VIDIOC_S_FMT, &f) < 0 { throw Errno(code: errno) }
        return V4L2ImageFormat(
            pixelFormat: PixelFormat(rawValue: f.fmt.pix.pixelformat),
            width: Int(f.fmt.pix.width), height: Int(f.fmt.pix.height),
            bytesPerLine: Int(f.fmt.pix.bytesperline), sizeImage: Int(f.fmt.pix.sizeimage))
    }

    /// One `write(2)`. - Returns: the bytes written (possibly fewer). - Throws: its `Errno` (`EAGAIN` when full).
    public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        let n = Glibc.write(fd, bytes.baseAddress, bytes.count)
        if n < 0 { throw Errno(code: errno) }
        return n
    }
}

/// Writes frames to a V4L2 output device, e.g. a v4l2loopback virtual camera other programs read from.
///
/// Opening checks `V4L2_CAP_VIDEO_OUTPUT` and sets the format with `VIDIOC_S_FMT`
/// (`V4L2_BUF_TYPE_VIDEO_OUTPUT`) at the frame size: `YUYV` (what most readers accept), else `BGR24` when
/// the device refuses YUYV. Each `write` sends one whole image with `write(2)` (no mmap); frames never
/// touch the disk. YUYV is converted from the BGR plane with the BT.601 studio-swing equations
/// (ITU-R BT.601: Y = 16 + (65.738 R + 129.057 G + 25.064 B) / 256, Cb and Cr likewise, averaged over each
/// pixel pair) into a scratch buffer allocated once per size.
///
/// Not thread-safe: use from the processing thread. `close()` or `deinit` release the descriptor.
public final class V4L2Output {
    /// The device path.
    public let path: String
    /// The format the device accepted.
    public private(set) var format: V4L2ImageFormat
    /// Frames written in full.
    public private(set) var framesWritten = 0
    /// Frames skipped because the device was not ready (`EAGAIN`) or took only part of the image.
    public private(set) var framesSkipped = 0

    private let syscalls: any V4L2OutputSyscalls
    private var fd: Int32
    private var scratch: UnsafeMutablePointer<UInt8>
    private var scratchCapacity = 0

    /// Opens `path` and sets a `width x height` format.
    /// - Throws: `CaptureError`: `.missing` (66) when `path` does not exist, `.unreadable` (66) without
    ///   permission, `.unsupported` (69) when it is not a video output device or accepts neither YUYV nor
    ///   BGR24 at that size, `.busy`/`.disconnected`/`.system` (69) for other failures.
    public init(
        path: String, width: Int, height: Int,
        syscalls: any V4L2OutputSyscalls = KernelV4L2OutputSyscalls()
    ) throws {
        precondition(width > 0 && height > 0, "frame size must be positive")
        self.path = path
        self.syscalls = syscalls
        scratch = .allocate(capacity: 1)
        let fd: Int32
        do {
            fd = try retryingOnInterrupt { () throws(Errno) in try syscalls.open(path) }
        } catch {
            scratch.deallocate()
            throw V4L2Camera.error(error, path: path, during: "open", access: syscalls.deviceAccess)
        }
        self.fd = fd
        format = V4L2ImageFormat(pixelFormat: .yuyv, width: width, height: height)
        do {
            let capability = try retryingOnInterrupt { () throws(Errno) in try syscalls.queryCapability(fd) }
            guard capability.nodeCapabilities.contains(.videoOutput) else {
                throw CaptureError(
                    .unsupported, subject: path,
                    reason: "not a video output device (\(capability.card); is it a v4l2loopback node?)")
            }
            format = try Self.negotiate(fd, width: width, height: height, syscalls: syscalls, path: path)
        } catch let error as Errno {
            close()
            if error.code == ENOTTY || error.code == EINVAL {
                throw CaptureError(.unsupported, subject: path, reason: "not a V4L2 device")
            }
            throw V4L2Camera.error(
                error, path: path, during: "VIDIOC_QUERYCAP/VIDIOC_S_FMT", access: syscalls.deviceAccess)
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
        scratch.deallocate()
    }

    private static func negotiate(
        _ fd: Int32, width: Int, height: Int, syscalls: any V4L2OutputSyscalls,
        path: String
    ) throws -> V4L2ImageFormat {
        let candidates: [(PixelFormat, Int)] = [(.yuyv, 2), (.bgr24, 3)]
        for candidate in candidates {
            let pixelFormat = candidate.0
            let bytesPerPixel = candidate.1
            let wanted = V4L2ImageFormat(
                pixelFormat: pixelFormat, width: width, height: height,
                bytesPerLine: width * bytesPerPixel, sizeImage: width * height * bytesPerPixel)
            let answer = Result { () throws(Errno) -> V4L2ImageFormat in
                try retryingOnInterrupt { () throws(Errno) in try syscalls.setOutputFormat(fd, wanted) }
            }
            let granted: V4L2ImageFormat
            switch answer {
            case .success(let format): granted = format
            case .failure(let error) where error.code == EINVAL: continue
            case .failure(let error): throw error
            }
            if granted.pixelFormat == pixelFormat && granted.width == width && granted.height == height {
                var result = granted
                result.bytesPerLine = max(granted.bytesPerLine, width * bytesPerPixel)
                result.sizeImage = result.bytesPerLine * height
                return result
            }
        }
        throw CaptureError(.unsupported, subject: path, reason: "accepts neither YUYV nor BGR24 at \(width)x\(height)")
    }

    /// Writes one frame from `buffer`'s BGR plane (`buffer.wantsColor` must be true and the size the one
    /// opened with). A device not ready for it (`EAGAIN`) or a short write skips the frame.
    /// - Throws: `CaptureError` `.unsupported` when the buffer has no colour plane or another size,
    ///   `.disconnected` when the device went away, `.system` for another write failure.
    public func write(_ buffer: PixelBuffer) throws {
        guard fd >= 0 else { throw CaptureError(.disconnected, subject: path, reason: "output device closed") }
        guard buffer.wantsColor, buffer.width == format.width, buffer.height == format.height else {
            throw CaptureError(
                .unsupported, subject: path,
                reason: "frame \(buffer.width)x\(buffer.height) does not match \(format.width)x\(format.height)")
        }
        let size = format.sizeImage
        if scratchCapacity < size {
            scratch.deallocate()
            scratch = .allocate(capacity: size)
            scratchCapacity = size
        }
        if format.pixelFormat == .yuyv {
            Self.convertToYUYV(buffer, into: scratch, bytesPerLine: format.bytesPerLine)
        } else {
            for row in 0..<format.height {
                (scratch + row * format.bytesPerLine).update(
                    from: buffer.bgr + row * format.width * 3,
                    count: format.width * 3)
            }
        }
        let bytes = UnsafeRawBufferPointer(start: scratch, count: size)
        do {
            let n = try retryingOnInterrupt { () throws(Errno) in try syscalls.write(fd, bytes) }
            if n == size { framesWritten += 1 } else { framesSkipped += 1 }
        } catch  where error.code == EAGAIN {
            framesSkipped += 1
        } catch {
            throw V4L2Camera.error(error, path: path, during: "write", access: syscalls.deviceAccess)
        }
    }

    /// BGR24 -> YUYV (Y0 U Y1 V), BT.601 studio swing in 8-bit fixed point.
    static func convertToYUYV(_ buffer: PixelBuffer, into out: UnsafeMutablePointer<UInt8>, bytesPerLine: Int) {
        let width = buffer.width
        for row in 0..<buffer.height {
            let source = buffer.bgr + row * width * 3
            let line = out + row * bytesPerLine
            var x = 0
            while x < width {
                let x1 = min(x + 1, width - 1)
                let b0 = Int32(source[3 * x])
                let g0 = Int32(source[3 * x + 1])
                let r0 = Int32(source[3 * x + 2])
                let b1 = Int32(source[3 * x1])
                let g1 = Int32(source[3 * x1 + 1])
                let r1 = Int32(source[3 * x1 + 2])
                let y0: Int32 = luma(r0, g0, b0)
                let y1: Int32 = luma(r1, g1, b1)
                let r: Int32 = (r0 + r1) / 2
                let g: Int32 = (g0 + g1) / 2
                let b: Int32 = (b0 + b1) / 2
                let u: Int32 = chroma(b, r, g, 112, -38, -74)
                let v: Int32 = chroma(r, g, b, 112, -94, -18)
                let p = line + 2 * x
                p[0] = UInt8(clamping: y0)
                p[1] = UInt8(clamping: u)
                if x + 1 < width {
                    p[2] = UInt8(clamping: y1)
                    p[3] = UInt8(clamping: v)
                }
                x += 2
            }
        }
    }

    @inline(__always)
    private static func luma(_ r: Int32, _ g: Int32, _ b: Int32) -> Int32 {
        let weighted: Int32 = 66 &* r &+ 129 &* g &+ 25 &* b &+ 128
        return (weighted >> 8) &+ 16
    }

    /// `(main x a + p x c1 + q x c2 + 128) >> 8 + 128`: Cb = chroma(B, R, G, 112, -38, -74),
    /// Cr = chroma(R, G, B, 112, -94, -18).
    @inline(__always)
    private static func chroma(_ main: Int32, _ p: Int32, _ q: Int32, _ a: Int32, _ c1: Int32, _ c2: Int32) -> Int32 {
        let weighted: Int32 = a &* main &+ c1 &* p &+ c2 &* q &+ 128
        return (weighted >> 8) &+ 128
    }

    /// Closes the descriptor. Idempotent; later writes throw `.disconnected`.
    public func close() {
        guard fd >= 0 else { return }
        syscalls.close(fd)
        fd = -1
    }
}
