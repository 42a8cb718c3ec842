import CWinkMedia
import Glibc
import WinkCore

/// A recorded video decoded with FFmpeg (CWinkMedia, set up as OpenCV's `VideoCapture` FFmpeg backend: the
/// same BGR frames), any container and codec FFmpeg decodes, display rotation applied.
///
/// Frame times come from the container (each frame's presentation timestamp), so variable-frame-rate files
/// keep their real timing; `time` is relative to the first frame, in seconds. `monotonicNanoseconds` is read from
/// `clock` when
/// the frame is decoded (the daemon's pacer overrides it with the release time). Not thread-safe.
public final class VideoFileSource: FrameSource {
    /// The path the video was opened with.
    public let name: String
    /// False: frames are read as fast as asked.
    public let isLive = false
    /// The container's nominal frames per second; nil when it does not say.
    public private(set) var nominalFrameRate: Double?
    /// Frame size in pixels.
    public let width: Int
    /// Frame height in pixels.
    public let height: Int
    private var video: OpaquePointer?
    private var index = 0
    private var firstMilliseconds: Double?
    private var lastTime: Double = -1
    private let clock: any MonotonicClock
    /// Damaged packets skipped, read from the decoder after each frame (kept after `close()`).
    private var damagedPackets = 0
    /// Why reading stopped before the end of the file, if it did.
    private var readError: String?
    /// The frame count the container declares exactly (0: it does not), and whether the end was reached.
    private var declaredFrames = 0
    private var reachedEnd = false
    /// The video packets read from the file by the end (one per frame stored).
    private var packetsRead = 0
    /// The stream's duration its container declares, in seconds (0: it does not say).
    private var declaredSeconds: Double = 0
    /// The time of the last frame decoded, in seconds from the stream's start (nil: none yet).
    private var lastFrameSeconds: Double?

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
        declaredFrames = Int(wm_video_declared_frames(handle))
        declaredSeconds = wm_video_declared_seconds(handle)
        isStill = wm_video_is_single_picture(handle) != 0
    }

    /// True when the file holds one picture (`wm_video_is_single_picture`: a one-frame GIF or video, an image
    /// only FFmpeg decodes, such as a TGA): one instant, judged as a photo is, without durations. A one-frame
    /// GIF of a smile was played as a video of one frame, too short for any held row.
    public let isStill: Bool

    /// Whether FFmpeg read the file as a still image (`wm_video_is_image`); `openMediaFile` then opens it as
    /// a `StillImageSource`.
    public var isImage: Bool { video.map { wm_video_is_image($0) != 0 } ?? false }

    /// What is wrong with the file as an image (`wm_image_damage`), for a damaged PNG or JPEG that OpenCV would
    /// not decode and FFmpeg's image decoders read anyway (they do not check a PNG's CRCs): part of `damage`.
    var imageDamage: String?

    /// Damaged packets skipped so far (see `damage`).
    public var corruptFramesDropped: Int { damagedPackets }

    /// See `FrameSource.damage`. "3 damaged packets skipped or concealed (later frames are numbered as
    /// decoded)": packets the decoder refused, and frames it decoded only in part (it said so in its log),
    /// "reading stopped early: Invalid data found when processing input", "it holds 30 of the 72 frames its
    /// container declares (truncated?)" or, for a container that counts no frames, "its frames end at 1.7 s
    /// of the 2.4 s its container declares (truncated?)", joined by "; ". The frame shortfall counts the
    /// packets in the file, not the frames shown: an MP4 edit list legitimately hides a few of them
    /// (no_face.mp4 shows 95 of its 98, as FFmpeg's own tools do).
    public var damage: String? {
        var parts = imageDamage.map { [$0] } ?? []
        if damagedPackets > 0 {
            parts.append("\(damagedPackets) damaged packet\(damagedPackets == 1 ? "" : "s") skipped or concealed "
                         + "(later frames are numbered as decoded)")
        }
        if let readError { parts.append("reading stopped early: \(readError)") }
        if reachedEnd && declaredFrames > 0 && packetsRead < declaredFrames {
            parts.append("it holds \(packetsRead) of the \(declaredFrames) frames its container declares (truncated?)")
        } else if reachedEnd, declaredFrames == 0, let shown = shortfall {
            parts.append(shown)
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// For a container that counts no frames (MKV, WebM): "its frames end at 1.7 s of the 2.4 s its container
    /// declares (truncated?)" when the last frame (plus one frame's time at the nominal rate) ends at least
    /// 0.5 s and 10% short of the declared duration; nil otherwise. The margins leave a video track a
    /// little shorter than its audio, which the file's duration also counts, unremarked.
    private var shortfall: String? {
        guard declaredSeconds > 0 else { return nil }
        let frame = 1 / (nominalFrameRate ?? 30)
        let end = (lastFrameSeconds ?? 0) + frame
        let missing = declaredSeconds - end
        guard missing >= 0.5 && missing >= 0.1 * declaredSeconds else { return nil }
        func seconds(_ s: Double) -> String { "\((s * 10).rounded() / 10) s" }
        return "its frames end at \(seconds(end)) of the \(seconds(declaredSeconds)) its container declares "
            + "(truncated?)"
    }

    /// Reads the decoder's reason for stopping early, at the end (reading stops at a read error).
    private func noteReadError(_ video: OpaquePointer) {
        var message = [CChar](repeating: 0, count: 256)
        if wm_video_read_error(video, &message, message.count) != 0 { readError = String(cString: message) }
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

    /// Decodes the next frame into `buffer` (grey; BGR too when it wants colour). `time` is strictly increasing:
    /// a missing or repeated timestamp becomes the last time plus one nominal interval (1/30 s if unknown).
    /// - Returns: nil at the end of the file (or after `close()`).
    /// - Throws: `CaptureError.internal` (exit 70) when the decoder fails.
    public func read(into buffer: PixelBuffer) throws -> FrameInfo? {
        guard let video else { return nil }
        buffer.resize(width: width, height: height)
        var ms: Double = 0
        let status = wm_video_read(video, buffer.gray, buffer.wantsColor ? buffer.bgr : nil, &ms)
        damagedPackets = Int(wm_video_damaged_packets(video))
        switch status {
        case WM_OK: break
        case WM_END:
            reachedEnd = true
            packetsRead = Int(wm_video_packets_read(video))
            noteReadError(video)
            return nil
        default: throw CaptureError(.internal, subject: name, reason: "decoder failed at frame \(index)")
        }
        if firstMilliseconds == nil { firstMilliseconds = ms }
        lastFrameSeconds = max(lastFrameSeconds ?? 0, ms / 1000)
        var time = (ms - (firstMilliseconds ?? 0)) / 1000
        // Some containers report no or repeated timestamps: keep time strictly increasing.
        if !(time > lastTime) {
            time = lastTime < 0 ? 0 : lastTime + 1 / (nominalFrameRate ?? 30)
        }
        lastTime = time
        defer { index += 1 }
        return FrameInfo(index: index, time: time, monotonicNanoseconds: clock.nanoseconds())
    }

    /// Closes the file; `damage` is kept. Idempotent.
    public func close() {
        if let video { wm_video_close(video) }
        video = nil
    }
}

/// A still image (any format OpenCV's `imread` decodes, through the WinkCodecs plugin loaded on first
/// use) delivered as a single frame at time 0.
public final class StillImageSource: FrameSource {
    /// The image's path.
    public let name: String
    /// False: a file.
    public let isLive = false
    /// Always true: one instant.
    public let isStill = true
    /// One frame.
    public let expectedFrameCount: Int? = 1
    /// nil: a still has no rate.
    public let nominalFrameRate: Double? = nil
    /// Image width in pixels.
    public let width: Int
    /// Image height in pixels.
    public let height: Int
    /// See `FrameSource.damage`: a PNG or JPEG that ends before its own end or whose PNG checksums fail
    /// (`wm_image_damage`); OpenCV decodes what it can of it.
    public let damage: String?
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
        damage = imageDamage(at: path)
    }

    /// Decodes the image into `buffer` (grey; BGR too when it wants colour) as frame 0 at time 0; nil afterwards.
    /// - Throws: `CaptureError.notMedia` (exit 65) when the image no longer decodes at the probed size.
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

    /// Does nothing: the file is opened only while it is read.
    public func close() {}
}

/// Sets OpenCV's documented limits on the images `imread` decodes (`OPENCV_IO_MAX_IMAGE_PIXELS`, `_WIDTH` and
/// `_HEIGHT`, read once when the WinkCodecs plugin loads OpenCV's codecs) to `WM_MAX_FRAME_PIXELS` (8192x8192)
/// and `WM_MAX_FRAME_SIDE` (16384): OpenCV's own default,
/// 2^30 pixels, let a 425 KB PNG of 20000x20000 take 1.7 GB. Such a still is then refused from its header
/// (65), as a video is. Whatever the environment said is replaced: OpenCV aborts the process on a value it
/// cannot parse ("abc" killed winkd when a client connected), and the limit is winkd's, said in its messages.
/// Call at the start of `main`, before any thread: setenv(3) is not thread-safe.
public func limitStillImageSize() {
    setenv("OPENCV_IO_MAX_IMAGE_PIXELS", String(WM_MAX_FRAME_PIXELS), 1)
    // And a side, as for videos: a 20000x2 PNG passed the pixel count alone.
    setenv("OPENCV_IO_MAX_IMAGE_WIDTH", String(WM_MAX_FRAME_SIDE), 1)
    setenv("OPENCV_IO_MAX_IMAGE_HEIGHT", String(WM_MAX_FRAME_SIDE), 1)
}

/// What is wrong with the PNG or JPEG at `path` ("truncated JPEG (...)", "corrupt PNG (...)"), or nil when it
/// is whole or of another format (`wm_image_damage`).
private func imageDamage(at path: String) -> String? {
    var said = [CChar](repeating: 0, count: 256)
    return wm_image_damage(path, &said, said.count) == 1 ? String(cString: said) : nil
}

/// Opens a file as a still image when its extension says so or FFmpeg recognises an image in it (decoded by
/// OpenCV's imread in the WinkCodecs plugin, which reads the format from the content), otherwise as a video
/// through FFmpeg. A photo is judged as a still whatever its name (a copy without an extension was played
/// as a one-frame video, with the video's calibration, and its smile went unreported).
/// - Throws: `CaptureError` `.missing`/`.unreadable` (exit 66; a pipe or device is unreadable as a
///   recording), `.notMedia` (exit 65) with FFmpeg's reason (no video stream, undecodable first frame...),
///   `.internal` (exit 70) when a still needs the plugin and it cannot be loaded.
public func openMediaFile(path: String, clock: any MonotonicClock = SystemClock()) throws -> FrameSource {
    let imageExtensions: Set<String> = ["jpg", "jpeg", "png", "bmp", "webp", "tif", "tiff", "pgm", "ppm", "pnm"]
    let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
    if imageExtensions.contains(ext) {
        do {
            return try StillImageSource(path: path, clock: clock)
        } catch let error as CaptureError where error.code == .notMedia {
            // Not an image OpenCV decodes after all (a video or a GIF named .jpg): FFmpeg may read it; if
            // not, OpenCV's reason stands.
            guard let video = try? VideoFileSource(path: path, clock: clock) else { throw error }
            video.imageDamage = imageDamage(at: path)
            return video
        }
    }
    // Anything else goes to FFmpeg, which also recognises an image without a telling extension (its *_pipe
    // demuxers probe the content); its reason for refusing a file is kept. An image is then decoded as a
    // still by OpenCV, unless OpenCV cannot (a TGA, a PCX: FFmpeg's reading stands).
    let video = try VideoFileSource(path: path, clock: clock)
    guard video.isImage, let still = try? StillImageSource(path: path, clock: clock) else { return video }
    video.close()
    return still
}
