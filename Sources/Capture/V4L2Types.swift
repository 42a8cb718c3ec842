#if canImport(Glibc)
import Glibc
#endif

/// A V4L2 pixel format: a FourCC code as in `<linux/videodev2.h>` (`v4l2_fourcc(a, b, c, d)`, `a` in the
/// low byte).
public struct PixelFormat: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The FourCC code, first character in the low byte.
    public var rawValue: UInt32
    /// The format with code `rawValue`.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Builds a code from its four characters, e.g. `PixelFormat("YUYV")`. Missing characters are spaces.
    public init(_ fourCC: String) {
        var bytes = Array(fourCC.utf8.prefix(4))
        while bytes.count < 4 { bytes.append(0x20) }
        rawValue = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    /// `V4L2_PIX_FMT_GREY`: 8-bit luma, one byte a pixel.
    public static let grey = PixelFormat("GREY")
    /// `V4L2_PIX_FMT_YUYV`: packed 4:2:2 Y'CbCr, Y0 U Y1 V.
    public static let yuyv = PixelFormat("YUYV")
    /// `V4L2_PIX_FMT_MJPEG`: Motion-JPEG, each buffer a JPEG image.
    public static let mjpeg = PixelFormat("MJPG")
    /// `V4L2_PIX_FMT_YUV420` ("YU12"): planar 4:2:0, a full-resolution Y plane followed by U and V planes.
    public static let yuv420 = PixelFormat("YU12")
    /// `V4L2_PIX_FMT_BGR24`: packed 8-bit B, G, R.
    public static let bgr24 = PixelFormat("BGR3")
    /// `V4L2_PIX_FMT_RGB24`: packed 8-bit R, G, B.
    public static let rgb24 = PixelFormat("RGB3")

    /// The four characters, e.g. "MJPG" (non-printable bytes as "?").
    public var fourCC: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (8 * $0)) }
        return String(decoding: bytes.map { (0x20..<0x7f).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    /// `fourCC`.
    public var description: String { fourCC }
}

/// Capability bits of `struct v4l2_capability` (`V4L2_CAP_*`).
public struct V4L2Capabilities: OptionSet, Hashable, Sendable {
    /// The `V4L2_CAP_*` bits.
    public var rawValue: UInt32
    /// The set with bits `rawValue`.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `V4L2_CAP_VIDEO_CAPTURE`: a single-planar video capture device.
    public static let videoCapture = V4L2Capabilities(rawValue: 0x0000_0001)
    /// `V4L2_CAP_META_CAPTURE`: a metadata capture node (UVC cameras add one next to the video node).
    public static let metaCapture = V4L2Capabilities(rawValue: 0x0080_0000)
    /// `V4L2_CAP_READWRITE`: `read(2)` I/O.
    public static let readWrite = V4L2Capabilities(rawValue: 0x0100_0000)
    /// `V4L2_CAP_STREAMING`: streaming I/O (mmap buffers, `VIDIOC_QBUF`/`VIDIOC_DQBUF`).
    public static let streaming = V4L2Capabilities(rawValue: 0x0400_0000)
    /// `V4L2_CAP_DEVICE_CAPS`: `device_caps` holds the capabilities of this node.
    public static let deviceCaps = V4L2Capabilities(rawValue: 0x8000_0000)
}

/// The answer to `VIDIOC_QUERYCAP` (`struct v4l2_capability`).
public struct V4L2Capability: Hashable, Sendable {
    /// Driver name, e.g. "uvcvideo".
    public var driver: String
    /// Device name, e.g. "HD Pro Webcam C920".
    public var card: String
    /// Bus location, e.g. "usb-0000:00:14.0-1".
    public var busInfo: String
    /// Capabilities of the whole physical device.
    public var capabilities: V4L2Capabilities
    /// Capabilities of this node (valid when `capabilities` contains `.deviceCaps`).
    public var deviceCapabilities: V4L2Capabilities

    /// A capability answer; `capabilities` and `deviceCapabilities` as the ioctl fills them.
    public init(driver: String, card: String, busInfo: String, capabilities: V4L2Capabilities,
                deviceCapabilities: V4L2Capabilities) {
        self.driver = driver
        self.card = card
        self.busInfo = busInfo
        self.capabilities = capabilities
        self.deviceCapabilities = deviceCapabilities
    }

    /// The capabilities of the opened node: `device_caps` when the driver sets it, else `capabilities`.
    public var nodeCapabilities: V4L2Capabilities {
        capabilities.contains(.deviceCaps) ? deviceCapabilities : capabilities
    }
}

/// One entry of `VIDIOC_ENUM_FMT` (`struct v4l2_fmtdesc`).
public struct V4L2FormatEntry: Hashable, Sendable {
    /// The format's FourCC.
    public var pixelFormat: PixelFormat
    /// The driver's description, e.g. "Motion-JPEG".
    public var description: String
    /// `V4L2_FMT_FLAG_COMPRESSED`.
    public var isCompressed: Bool
    /// `V4L2_FMT_FLAG_EMULATED`: not offered by the hardware but converted by libv4l2.
    public var isEmulated: Bool

    /// An entry; the flags default to false.
    public init(pixelFormat: PixelFormat, description: String, isCompressed: Bool = false, isEmulated: Bool = false) {
        self.pixelFormat = pixelFormat
        self.description = description
        self.isCompressed = isCompressed
        self.isEmulated = isEmulated
    }
}

/// A width and height in pixels.
public struct FrameSize: Hashable, Sendable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// A size in pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    /// `WIDTHxHEIGHT`, e.g. "640x480".
    public var description: String { "\(width)x\(height)" }
}

/// One entry of `VIDIOC_ENUM_FRAMESIZES` (`struct v4l2_frmsizeenum`).
public enum V4L2FrameSizeEntry: Hashable, Sendable {
    /// `V4L2_FRMSIZE_TYPE_DISCRETE`: one size.
    case discrete(FrameSize)
    /// `V4L2_FRMSIZE_TYPE_STEPWISE` / `_CONTINUOUS` (step 1): every size from `minimum` to `maximum` in
    /// steps of `step`.
    case stepwise(minimum: FrameSize, maximum: FrameSize, step: FrameSize)
}

/// A time in seconds as a fraction (`struct v4l2_fract`), e.g. a frame interval of 1/30 s.
public struct Fraction: Hashable, Sendable {
    /// The numerator (seconds, for an interval).
    public var numerator: UInt32
    /// The denominator.
    public var denominator: UInt32
    /// `numerator / denominator` seconds.
    public init(_ numerator: UInt32, _ denominator: UInt32) {
        self.numerator = numerator
        self.denominator = denominator
    }
    /// The value in seconds (0 when the denominator is 0).
    public var seconds: Double { denominator == 0 ? 0 : Double(numerator) / Double(denominator) }
    /// Frames per second for a frame interval (0 when the numerator is 0).
    public var framesPerSecond: Double { numerator == 0 ? 0 : Double(denominator) / Double(numerator) }
}

/// One entry of `VIDIOC_ENUM_FRAMEINTERVALS` (`struct v4l2_frmivalenum`): frame intervals in seconds.
public enum V4L2FrameIntervalEntry: Hashable, Sendable {
    /// `V4L2_FRMIVAL_TYPE_DISCRETE`: one interval.
    case discrete(Fraction)
    /// `V4L2_FRMIVAL_TYPE_STEPWISE` / `_CONTINUOUS`: any interval from `minimum` to `maximum`.
    case stepwise(minimum: Fraction, maximum: Fraction, step: Fraction)
}

/// The single-planar image format set with `VIDIOC_S_FMT` (`struct v4l2_pix_format`).
public struct V4L2ImageFormat: Hashable, Sendable {
    /// The format's FourCC.
    public var pixelFormat: PixelFormat
    /// Size in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Bytes from one row to the next (0 when asking: the driver fills it in).
    public var bytesPerLine: Int
    /// Bytes of one whole image (0 when asking).
    public var sizeImage: Int

    /// A format; `bytesPerLine` and `sizeImage` (bytes) default to 0, for the driver to fill in.
    public init(pixelFormat: PixelFormat, width: Int, height: Int, bytesPerLine: Int = 0, sizeImage: Int = 0) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.bytesPerLine = bytesPerLine
        self.sizeImage = sizeImage
    }
}

/// Flags of `struct v4l2_buffer` (`V4L2_BUF_FLAG_*`).
public struct V4L2BufferFlags: OptionSet, Hashable, Sendable {
    /// The `V4L2_BUF_FLAG_*` bits.
    public var rawValue: UInt32
    /// The set with bits `rawValue`.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `V4L2_BUF_FLAG_ERROR`: the data may be corrupt (a USB transfer error, for example).
    public static let error = V4L2BufferFlags(rawValue: 0x0000_0040)
    /// `V4L2_BUF_FLAG_TIMESTAMP_MASK`: the bits saying which clock `timestamp` is on.
    public static let timestampMask = V4L2BufferFlags(rawValue: 0x0000_e000)
    /// `V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC`: `timestamp` is on `CLOCK_MONOTONIC`.
    public static let timestampMonotonic = V4L2BufferFlags(rawValue: 0x0000_2000)
    /// `V4L2_BUF_FLAG_TIMESTAMP_COPY`: `timestamp` was copied from an output buffer.
    public static let timestampCopy = V4L2BufferFlags(rawValue: 0x0000_4000)

    /// Whether the timestamp is on `CLOCK_MONOTONIC`.
    public var hasMonotonicTimestamp: Bool {
        rawValue & Self.timestampMask.rawValue == Self.timestampMonotonic.rawValue
    }
}

/// A buffer handed back by `VIDIOC_DQBUF` (`struct v4l2_buffer`, memory `V4L2_MEMORY_MMAP`).
public struct V4L2DequeuedBuffer: Hashable, Sendable {
    /// Which of the requested buffers it is.
    public var index: Int
    /// Bytes of image data in the buffer.
    public var bytesUsed: Int
    /// The buffer's flags (error, timestamp clock).
    public var flags: V4L2BufferFlags
    /// The driver's frame counter (gaps mean dropped frames).
    public var sequence: UInt32
    /// Capture time in nanoseconds from `timestamp` (a `struct timeval`), on the clock `flags` name.
    public var timestampNanoseconds: UInt64

    /// A dequeued buffer; `bytesUsed` in bytes, `timestampNanoseconds` in nanoseconds.
    public init(index: Int, bytesUsed: Int, flags: V4L2BufferFlags, sequence: UInt32, timestampNanoseconds: UInt64) {
        self.index = index
        self.bytesUsed = bytesUsed
        self.flags = flags
        self.sequence = sequence
        self.timestampNanoseconds = timestampNanoseconds
    }
}

/// Where a requested buffer lives, from `VIDIOC_QUERYBUF`: the `mmap(2)` offset and length in bytes.
public struct V4L2BufferLocation: Hashable, Sendable {
    /// The `mmap(2)` offset, bytes.
    public var offset: Int
    /// The buffer's length, bytes.
    public var length: Int
    /// A location; both in bytes.
    public init(offset: Int, length: Int) {
        self.offset = offset
        self.length = length
    }
}
