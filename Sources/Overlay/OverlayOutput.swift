import CWinkOverlay
import Glibc
import WinkCore

/// What an output path is, by its extension.
public enum OverlayOutputKind: Sendable, Equatable {
    /// `.png`, `.jpg`, `.jpeg`: one still image.
    case image
    /// `.mp4`, `.m4v`, `.mov`, `.mkv`, `.avi`. `winkctl overlay` writes the first four as H.264 with the
    /// input's audio (Capture's `VideoFileWriter`, through `OverlayRun.run(openVideo:)`); `OverlayVideoWriter`
    /// (OpenCV) writes MPEG-4 Part 2 (FourCC `mp4v`) into `.mp4`/`.m4v`/`.mov` and Motion JPEG (`MJPG`) into
    /// `.avi`/`.mkv`, without audio.
    case video

    /// The kind for `path`, or `nil` for an extension neither writer handles.
    public init?(path: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: ".") else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "png", "jpg", "jpeg": self = .image
        case "mp4", "m4v", "mov", "avi", "mkv": self = .video
        default: return nil
        }
    }
}

extension OverlayError {
    /// The error for a failed write of `path`: `.internal` (exit 70) when the codec plugin could not be
    /// loaded or OpenCV failed (`WO_INTERNAL`), `.writeFailed` (exit 74) when the file was created but writing
    /// it failed (`WO_WRITE_FAILED`: a full disk), otherwise `.output` (exit 73: the file cannot be created).
    /// A `temporary` file written for `path` is named as `path` in the message.
    static func writing(_ status: wo_status, path: String, message: [CChar], fallback: String,
                        temporary: String? = nil) -> OverlayError {
        var reason = String(cString: message)
        if let temporary { reason = reason.replacingOccurrences(of: temporary, with: path) }
        let code: OverlayErrorCode = switch status {
        case WO_INTERNAL: .internal
        case WO_WRITE_FAILED: .writeFailed
        default: .output
        }
        if code == .output {
            // Say which: "no such directory /x", "no permission to create files in /y" (73).
            do { try OutputFile.checkCreatable(path) } catch let error as OutputFileError {
                return OverlayError(.output, subject: path, reason: error.reason)
            } catch {}
        }
        return OverlayError(code, subject: path, reason: reason.isEmpty ? fallback : reason)
    }
}

/// Writes a frame's BGR plane as a PNG (compression 9) or JPEG (quality 95), by `path`'s extension, through
/// OpenCV's `imencode` and a checked write, under a temporary name renamed over `path` once written
/// (`PendingOutput`): a failed write leaves what was at `path` as it was.
/// - Throws: `OverlayError.output` (exit 73) for an unknown extension or a file that cannot be created,
///   `.writeFailed` (exit 74) when writing it fails ("writing failed: No space left on device"; the
///   incomplete file is removed), `.internal` (exit 70) when the buffer has no colour plane or the codec
///   plugin cannot be loaded.
public func writeImage(_ buffer: PixelBuffer, to path: String) throws {
    guard buffer.wantsColor else {
        throw OverlayError(.internal, subject: path, reason: "the frame buffer has no BGR plane (wantsColor is false)")
    }
    let pending = try PendingOutput.forOverlay(path, deferringSignals: true)
    var message = [CChar](repeating: 0, count: 256)
    let status = wo_image_write(
        pending.temporary, buffer.bgr, Int32(buffer.width), Int32(buffer.height), Int32(3 * buffer.width),
        &message, message.count)
    guard status == WO_OK else {
        pending.discard()
        throw OverlayError.writing(status, path: path, message: message, fallback: "cannot write the image",
                                   temporary: pending.temporary)
    }
    try pending.commitForOverlay()
}

extension PendingOutput {
    /// A pending output for `path`, its errors as `OverlayError` (73, or 74 on a full disk).
    static func forOverlay(_ path: String, deferringSignals: Bool = false) throws -> PendingOutput {
        do {
            return try PendingOutput(destination: path, deferringSignals: deferringSignals)
        } catch let error as OutputFileError {
            throw OverlayError(error.code == .writeFailed ? .writeFailed : .output, subject: path, reason: error.reason)
        }
    }

    /// `commit()`, its errors as `OverlayError`.
    func commitForOverlay() throws {
        do {
            try commit()
        } catch let error as OutputFileError {
            throw OverlayError(error.code == .writeFailed ? .writeFailed : .output, subject: destination,
                               reason: error.reason)
        }
    }
}

/// A video file written frame by frame with OpenCV's `VideoWriter` (FFmpeg backend). The codec follows the
/// extension (see `OverlayOutputKind.video`). Not thread-safe. The file is written under a temporary name
/// beside `path` (`PendingOutput`); `finish(readBack:)` finishes it, proves it whole and renames it over
/// `path`; `close()` (or deinit) before that removes it, and what was at `path` stays.
///
/// OpenCV 4.6's `VideoWriter` reports no write errors: on a full disk every frame "succeeds" and the file
/// ends without its index (an MP4 without its moov atom). Hence the reading back.
public final class OverlayVideoWriter: FrameSink {
    /// The file written once `finish(readBack:)` succeeds.
    public let path: String
    /// Frame width in pixels.
    public let width: Int
    /// Frame height in pixels.
    public let height: Int
    /// Frames written so far.
    public private(set) var frameCount = 0
    private var handle: OpaquePointer?
    /// The temporary file being written, renamed over `path` once finished.
    private let pending: PendingOutput
    /// How `finish()` reads the file back (see `finish(readBack:)`); nil: it only closes the file.
    private let readBack: ((String) throws -> any FrameSource)?

    /// - Parameters:
    ///   - framesPerSecond: the rate stored in the container (> 0).
    ///   - readBack: what `finish()` proves the file with (see `finish(readBack:)`).
    /// - Throws: `OverlayError.output` (exit 73) for an unknown extension or a file that cannot be created,
    ///   `.internal` (exit 70) when the codec plugin cannot be loaded.
    public init(path: String, width: Int, height: Int, framesPerSecond: Double,
                readBack: ((String) throws -> any FrameSource)? = nil) throws {
        self.path = path
        self.readBack = readBack
        self.width = width
        self.height = height
        pending = try PendingOutput.forOverlay(path)
        var out: OpaquePointer?
        var message = [CChar](repeating: 0, count: 256)
        let status = wo_video_writer_open(
            pending.temporary, Int32(width), Int32(height), framesPerSecond, &out, &message,
            message.count)
        guard status == WO_OK, let out else {
            pending.discard()
            throw OverlayError.writing(status, path: path, message: message, fallback: "cannot open the video writer",
                                       temporary: pending.temporary)
        }
        handle = out
    }

    deinit { close() }

    /// Appends the BGR plane of `buffer`, which must have the writer's size.
    /// - Throws: `OverlayError.output` for a frame of another size, a closed writer or an encoder failure.
    public func write(_ buffer: PixelBuffer) throws {
        guard let handle else { throw OverlayError(.output, subject: path, reason: "the video writer is closed") }
        guard buffer.wantsColor, buffer.width == width, buffer.height == height else {
            throw OverlayError(
                .output, subject: path,
                reason: "frame \(frameCount) is \(buffer.width)x\(buffer.height), expected \(width)x\(height)")
        }
        let status = wo_video_writer_write(handle, buffer.bgr, Int32(3 * width))
        guard status == WO_OK else {
            throw OverlayError(.output, subject: path, reason: "encoding frame \(frameCount) failed")
        }
        frameCount += 1
    }

    /// Releases the writer without finishing the output: the temporary file is removed and what was at
    /// `path` stays. Idempotent; nothing after `finish()`.
    public func close() {
        release()
        pending.discard()
    }

    /// Closes OpenCV's writer, which writes the container's end. Idempotent.
    private func release() {
        if let handle { wo_video_writer_close(handle) }
        handle = nil
    }

    /// Finishes the file, proves it whole with the `readBack` given at creation, if any (without one,
    /// OpenCV's silence about write errors is taken at its word), and renames it over `path`.
    /// - Throws: as `finish(readBack:)`.
    public func finish() throws {
        if let readBack { return try finish(readBack: readBack) }
        release()
        try pending.commitForOverlay()
    }

    /// Finishes the file and reads it back with `readBack` (e.g. Capture's `VideoFileSource`), counting its
    /// frames: it must open as a video and hold every frame written. Reading back decodes the whole file once
    /// (a fraction of the time the frames took to draw, which includes finding the faces).
    /// - Throws: `OverlayError.writeFailed` (exit 74) when the file is unreadable or short, e.g. "writing
    ///   failed: No space left on device (the file holds 0 of 72 frames); the incomplete file was removed"
    ///   (the cause is named when the file system has no space left); the file is removed.
    public func finish(readBack: (String) throws -> any FrameSource) throws {
        release()
        let expected = frameCount
        var problem: String?
        do {
            let source = try readBack(pending.temporary)
            defer { source.close() }
            let buffer = PixelBuffer()
            var frames = 0
            while try source.read(into: buffer) != nil { frames += 1 }
            if frames != expected { problem = "the file holds \(frames) of \(expected) frames" }
        } catch {
            var reason = describeError(error)
            if reason.hasPrefix(pending.temporary + ": ") { reason.removeFirst(pending.temporary.count + 2) }
            problem = "the file does not read back: \(reason.replacingOccurrences(of: pending.temporary, with: path))"
        }
        guard let problem else { return try pending.commitForOverlay() }
        let cause = Self.fileSystemIsFull(at: pending.temporary) ? "No space left on device (\(problem))" : problem
        pending.discard()
        throw OverlayError(.writeFailed, subject: path,
                           reason: "writing failed: \(cause); the incomplete file was removed")
    }

    /// Whether the file system holding `path` has no free block left (for the one who writes: root may use
    /// the blocks reserved for it).
    static func fileSystemIsFull(at path: String) -> Bool {
        var fs = statvfs()
        guard statvfs(path, &fs) == 0 else { return false }
        return (geteuid() == 0 ? fs.f_bfree : fs.f_bavail) == 0
    }
}

/// What an overlay run did.
public struct OverlayRunSummary: Sendable, Equatable {
    /// Frames read and written.
    public var frames: Int
    /// Faces drawn on, summed over frames.
    public var faces: Int
}

/// Runs a layout over a whole input: reads each frame, finds the faces, draws the layers and writes the
/// result as an image (the first frame) or a video of the same size, frame count and rate.
public enum OverlayRun {
    /// Opens the video output for frames of `width` x `height` pixels at `framesPerSecond`, or returns nil
    /// to leave it to `OverlayVideoWriter`.
    public typealias VideoOpener = (_ path: String, _ width: Int, _ height: Int, _ framesPerSecond: Double) throws
        -> (any FrameSink)?

    /// - Parameters:
    ///   - source: the input; read into a `PixelBuffer(wantsColor: true)`.
    ///   - output: `.png`/`.jpg` for an image, a video extension for a video (see `OverlayOutputKind`).
    ///   - mirrored: whether the input is a mirror image and `faces` are un-mirrored (see
    ///     `OverlayRenderer.render(_:on:mirrored:)`).
    ///   - openVideo: opens a video output (e.g. Capture's `VideoFileWriter`, H.264 with the input's audio)
    ///     at the first frame's size and the source's nominal rate (30 if unknown); when it returns nil, or by
    ///     default, OpenCV's `OverlayVideoWriter` writes the video.
    ///   - readBack: opens a written video to prove it whole (e.g. `{ try VideoFileSource(path: $0) }`); see
    ///     `OverlayVideoWriter.finish(readBack:)`. Used only for a video `OverlayVideoWriter` writes.
    ///   - faces: the faces of one frame (e.g. `FaceTracker.detectAll`).
    /// - Throws: `OverlayError.output` for an unknown output extension, an image output from an input with
    ///   more than one frame, or an output that cannot be created; `.writeFailed` (exit 74) when writing
    ///   fails (a full disk); whatever `source`, `openVideo`, the sink it opens, and `faces` throw.
    public static func run(
        source: any FrameSource, output: String, renderer: OverlayRenderer, mirrored: Bool = false,
        openVideo: VideoOpener = { _, _, _, _ in nil },
        readBack: @escaping (String) throws -> any FrameSource, faces: (PixelBuffer) throws -> [FaceObservation]
    ) throws -> OverlayRunSummary {
        guard let kind = OverlayOutputKind(path: output) else {
            throw OverlayError(
                .output, subject: output,
                reason: "unknown output extension (use .png, .jpg, .jpeg, .mp4, .m4v, .mov, .avi or .mkv)")
        }
        let buffer = PixelBuffer(wantsColor: true)
        var summary = OverlayRunSummary(frames: 0, faces: 0)
        var writer: (any FrameSink)?
        defer { writer?.close() }
        while let info = try source.read(into: buffer) {
            if kind == .image && summary.frames == 1 {
                throw OverlayError(
                    .output, subject: output,
                    reason: "an image output needs a still image input, "
                        + "but \(source.name) has more than one frame (use a video extension)")
            }
            let found = try faces(buffer)
            try renderer.render(found, on: buffer, mirrored: mirrored)
            summary.faces += found.count
            switch kind {
            case .image:
                try writeImage(buffer, to: output)
            case .video:
                if writer == nil {
                    let rate = source.nominalFrameRate ?? 30
                    writer = try openVideo(output, buffer.width, buffer.height, rate)
                        ?? OverlayVideoWriter(
                            path: output, width: buffer.width, height: buffer.height, framesPerSecond: rate,
                            readBack: readBack)
                }
                try writer?.write(buffer, time: info.time)
            }
            summary.frames += 1
        }
        try writer?.finish()
        return summary
    }
}
