import CWinkMedia
import WinkCore

/// A recorded video decoded with FFmpeg (CWinkMedia, set up as OpenCV's `VideoCapture` FFmpeg backend: the
/// same BGR frames), any container and codec FFmpeg decodes, display rotation applied.
///
/// Frame times come from the container (each frame's presentation timestamp), so variable-frame-rate files
/// keep their real timing; `time` is relative to the first frame, in seconds. `monotonicNanoseconds` is read from
/// `clock` when
/// the frame is decoded (the daemon's pacer overrides it with the release time). Not thread-safe.
public final class VideoFileSource: FrameSource {
    public let name: String
    public let isLive = false
    public private(set) var nominalFrameRate: Double?
    /// Frame size in pixels.
    public let width: Int
    public let height: Int
    private var video: OpaquePointer?
    private var index = 0
    private var firstMilliseconds: Double?
    private var lastTime: Double = -1
    private let clock: any MonotonicClock

    /// Opens `path` and decodes its first frame to prove it is a video.
    /// - Throws: `CaptureError` `.missing`/`.unreadable` (exit 66) or `.notMedia` (exit 65).
    public init(path: String, clock: any MonotonicClock = SystemClock()) throws {
        name = path
        self.clock = clock
        var handle: OpaquePointer?
        var message = [CChar](repeating: 0, count: 256)
        let status = wm_video_open(path, &handle, &message, message.count)
        guard status == WM_OK, let handle else {
            throw CaptureError(Self.code(status), subject: path, reason: String(cString: message))
        }
        video = handle
        var w: Int32 = 0
        var h: Int32 = 0
        var fps: Double = 0
        wm_video_info(handle, &w, &h, &fps)
        width = Int(w)
        height = Int(h)
        nominalFrameRate = fps > 0 ? fps : nil
    }

    deinit { close() }

    /// The container's frame count (or duration times rate), nil when it does not say.
    public var expectedFrameCount: Int? {
        guard let video else { return nil }
        let n = wm_video_expected_frames(video)
        return n > 0 ? Int(n) : nil
    }

    static func code(_ status: wm_status) -> CaptureErrorCode {
        switch status {
        case WM_MISSING: .missing
        case WM_UNREADABLE: .unreadable
        case WM_NOT_MEDIA: .notMedia
        default: .internal
        }
    }

    public func read(into buffer: PixelBuffer) throws -> FrameInfo? {
        guard let video else { return nil }
        buffer.resize(width: width, height: height)
        var ms: Double = 0
        let status = wm_video_read(video, buffer.gray, buffer.wantsColor ? buffer.bgr : nil, &ms)
        switch status {
        case WM_OK: break
        case WM_END: return nil
        default: throw CaptureError(.internal, subject: name, reason: "decoder failed at frame \(index)")
        }
        if firstMilliseconds == nil { firstMilliseconds = ms }
        var time = (ms - (firstMilliseconds ?? 0)) / 1000
        // Some containers report no or repeated timestamps: keep time strictly increasing.
        if !(time > lastTime) {
            time = lastTime < 0 ? 0 : lastTime + 1 / (nominalFrameRate ?? 30)
        }
        lastTime = time
        defer { index += 1 }
        return FrameInfo(index: index, time: time, monotonicNanoseconds: clock.nanoseconds())
    }

    public func close() {
        if let video { wm_video_close(video) }
        video = nil
    }
}

/// A still image (any format OpenCV's `imread` decodes, through the WinkCodecs plugin loaded on first
/// use) delivered as a single frame at time 0.
public final class StillImageSource: FrameSource {
    public let name: String
    public let isLive = false
    /// Always true: one instant.
    public let isStill = true
    /// One frame.
    public let expectedFrameCount: Int? = 1
    public let nominalFrameRate: Double? = nil
    public let width: Int
    public let height: Int
    private var delivered = false
    private let clock: any MonotonicClock

    /// - Throws: `CaptureError` `.missing`/`.unreadable` (exit 66), `.notMedia` (exit 65), or `.internal`
    ///   (exit 70) when the WinkCodecs plugin cannot be loaded (the message names where it was looked for).
    public init(path: String, clock: any MonotonicClock = SystemClock()) throws {
        name = path
        self.clock = clock
        var w: Int32 = 0
        var h: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = wm_image_probe(path, &w, &h, &message, message.count)
        guard status == WM_OK else {
            throw CaptureError(VideoFileSource.code(status), subject: path, reason: String(cString: message))
        }
        width = Int(w)
        height = Int(h)
    }

    public func read(into buffer: PixelBuffer) throws -> FrameInfo? {
        guard !delivered else { return nil }
        buffer.resize(width: width, height: height)
        let status = wm_image_read(
            name, Int32(width), Int32(height), buffer.gray,
            buffer.wantsColor ? buffer.bgr : nil)
        guard status == WM_OK else {
            throw CaptureError(.notMedia, subject: name, reason: "image could no longer be decoded")
        }
        delivered = true
        return FrameInfo(index: 0, time: 0, monotonicNanoseconds: clock.nanoseconds())
    }

    public func close() {}
}

/// Opens a file as a still image when its extension says so (decoded by OpenCV's imread in the WinkCodecs
/// plugin), otherwise as a video through FFmpeg (which also reads an image with another extension).
/// - Throws: `CaptureError` `.missing`/`.unreadable` (exit 66; a pipe or device is unreadable as a
///   recording), `.notMedia` (exit 65) with FFmpeg's reason (no video stream, undecodable first frame...),
///   `.internal` (exit 70) when a still needs the plugin and it cannot be loaded.
public func openMediaFile(path: String, clock: any MonotonicClock = SystemClock()) throws -> FrameSource {
    let imageExtensions: Set<String> = ["jpg", "jpeg", "png", "bmp", "webp", "tif", "tiff", "pgm", "ppm", "pnm"]
    let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
    if imageExtensions.contains(ext) {
        return try StillImageSource(path: path, clock: clock)
    }
    // Anything else goes to FFmpeg, which also reads an image without a telling extension (its *_pipe
    // demuxers probe the content) as a one-frame video; its reason for refusing a file is kept.
    return try VideoFileSource(path: path, clock: clock)
}
