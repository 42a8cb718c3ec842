import CWinkMedia
import Glibc
import WinkCore

/// Errors writing a video file (`VideoFileWriter`); the subject is the output path.
public typealias VideoWriteError = SubjectError<VideoWriteErrorCode>

/// What went wrong writing a video file, deciding the exit code.
public enum VideoWriteErrorCode: ExitCodeKind {
    /// The file cannot be created: no such folder, no permission, an extension that names no container.
    /// Exit 73 (`EX_CANTCREAT`), as every output that cannot be created.
    case cannotCreate
    /// The file was created but writing it failed (a full disk, an I/O error); the incomplete file is
    /// removed. Exit 74 (`EX_IOERR`).
    case writeFailed
    /// The encoder could not be set up, or a frame of the wrong size was given. Exit 70.
    case `internal`

    /// 73 for `cannotCreate`, 74 for `writeFailed`, 70 for `internal`.
    public var exitCode: ExitCode {
        switch self {
        case .cannotCreate: .cannotCreate
        case .writeFailed: .ioError
        case .internal: .software
        }
    }
}

/// A video file written with FFmpeg (libavformat, libavcodec): H.264 through libx264 in the container the
/// extension names (`.mp4`, `.m4v`, `.mov`, `.mkv`), with the audio of another file (the input) copied
/// packet for packet. Each frame keeps the time it is given (`write(_:time:)`: the input frame's own, so a
/// variable-rate recording stays in step with its audio), else frame i is stamped i / `framesPerSecond`
/// seconds. The file is written under a temporary
/// name beside `path` and renamed over it by `finish()` (`PendingOutput`): a failed or stopped run leaves
/// what was at `path` as it was.
///
/// When this FFmpeg has none of the `encoders` asked for, the video is written with libavcodec's own MPEG-4
/// Part 2 encoder instead and `fallbackNote` says so (one line for stderr). Write errors are FFmpeg's own
/// (a full disk fails the write or the index at the end), so `finish()` needs no reading back. Not
/// thread-safe.
public final class VideoFileWriter: FrameSink {
    /// The encoders tried in order: libx264 (Debian's libavcodec59 has it).
    public static let h264Encoders = ["libx264"]
    /// Extensions whose containers this writer makes.
    public static let extensions: Set<String> = ["mp4", "m4v", "mov", "mkv"]

    /// The file written.
    public let path: String
    /// Frame size in pixels.
    public let width: Int
    /// Frame height in pixels.
    public let height: Int
    /// The libavcodec encoder in use: "libx264", or "mpeg4" after a fallback.
    public let encoder: String
    /// Audio streams being copied from `audioFrom`.
    public let audioStreams: Int
    /// One line saying that no H.264 encoder was found and which one writes the video instead; nil when one
    /// of the `encoders` asked for is in use.
    public let fallbackNote: String?
    /// Frames written so far.
    public private(set) var frameCount = 0
    private var handle: OpaquePointer?
    /// The temporary file being written, renamed over `path` by `finish()`.
    private let pending: PendingOutput

    /// Whether `path`'s extension names a container this writer makes (see `extensions`).
    public static func handles(path: String) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: ".") else { return false }
        return extensions.contains(name[name.index(after: dot)...].lowercased())
    }

    /// Starts the file (a temporary one beside `path`; `path` itself is replaced only by `finish()`).
    /// - Parameters:
    ///   - width, height: frame size in pixels (1...16384).
    ///   - framesPerSecond: the frame rate stored in the container, 0 < fps <= 1000.
    ///   - audioFrom: a media file whose audio streams are copied (usually the input being drawn on); its
    ///     first video frame is time 0 of the output. `nil`, a file without audio or one FFmpeg cannot read:
    ///     no audio. A stream whose codec the container does not take is left out.
    ///   - encoders: libavcodec encoder names tried in order.
    /// - Throws: `VideoWriteError` `.cannotCreate` (exit 73) when the file cannot be created,
    ///   `.writeFailed` (74) when its header cannot be written (the temporary file is removed), `.internal`
    ///   (70) for a size or rate out of range or an encoder that cannot be opened.
    public init(path: String, width: Int, height: Int, framesPerSecond: Double, audioFrom: String? = nil,
                encoders: [String] = VideoFileWriter.h264Encoders) throws {
        self.path = path
        self.width = width
        self.height = height
        do {
            pending = try PendingOutput(destination: path)
        } catch let error as OutputFileError {
            throw Self.writeError(error)
        }
        var out: OpaquePointer?
        var message = [CChar](repeating: 0, count: 256)
        let status = wm_writer_open(pending.temporary, Int32(clamping: width), Int32(clamping: height), framesPerSecond,
                                    encoders.joined(separator: ","), audioFrom, &out, &message, message.count)
        guard status == WM_OK, let out else {
            pending.discard()
            let reason = String(cString: message).replacingOccurrences(of: pending.temporary, with: path)
            switch status {
            case WM_CANNOT_CREATE:
                throw VideoWriteError(.cannotCreate, subject: path, reason: "cannot create the video file: \(reason)")
            case WM_WRITE_FAILED:
                throw VideoWriteError(.writeFailed, subject: path,
                                      reason: "writing failed: \(reason); the incomplete file was removed")
            case WM_BAD_ARGUMENT:
                throw VideoWriteError(.internal, subject: path,
                                      reason: "cannot write \(width)x\(height) frames at \(framesPerSecond) fps")
            default:
                throw VideoWriteError(.internal, subject: path,
                                      reason: reason.isEmpty ? "cannot set up the encoder" : reason)
            }
        }
        handle = out
        encoder = String(cString: wm_writer_encoder(out))
        audioStreams = Int(wm_writer_audio_streams(out))
        fallbackNote = encoders.contains(encoder) ? nil
            : "no H.264 encoder (\(encoders.joined(separator: ", "))) in this FFmpeg; "
                + "\(path) is written as \(encoder == "mpeg4" ? "MPEG-4 Part 2" : encoder) instead"
    }

    deinit { close() }

    /// Appends the BGR plane of `buffer` at frame count / rate.
    /// - Throws: as `write(_:time:)`.
    public func write(_ buffer: PixelBuffer) throws { try write(buffer, time: -1) }

    /// Appends the BGR plane of `buffer`, which must have the writer's size, shown at `time` seconds from the
    /// first frame (negative: frame count / rate). A time not after the last frame's is moved 1/60000 s
    /// after it.
    /// - Throws: `VideoWriteError.internal` for a frame of another size or without colour, or a finished writer,
    ///   `.writeFailed` (exit 74) when writing fails (the file is removed).
    public func write(_ buffer: PixelBuffer, time: Double) throws {
        guard let handle else { throw VideoWriteError(.internal, subject: path, reason: "the video writer is closed") }
        guard buffer.width == width, buffer.height == height else {
            let size = "\(buffer.width)x\(buffer.height)"
            throw VideoWriteError(.internal, subject: path,
                                  reason: "frame \(frameCount) is \(size), expected \(width)x\(height)")
        }
        guard buffer.wantsColor else {
            throw VideoWriteError(.internal, subject: path,
                                  reason: "frame \(frameCount) has no colour plane (a grey-only PixelBuffer)")
        }
        var message = [CChar](repeating: 0, count: 256)
        let status = wm_writer_write(handle, buffer.bgr, Int32(3 * width), time, &message, message.count)
        guard status == WM_OK else { throw failure(status, message) }
        frameCount += 1
    }

    /// Flushes the encoder, copies the rest of the audio, writes the container's index and renames the
    /// finished file over `path`.
    /// - Throws: `VideoWriteError.writeFailed` (exit 74), e.g. "writing failed: No space left on device; the
    ///   incomplete file was removed" (what was at `path` stays).
    public func finish() throws {
        guard let handle else { throw VideoWriteError(.internal, subject: path, reason: "the video writer is closed") }
        var message = [CChar](repeating: 0, count: 256)
        let status = wm_writer_finish(handle, &message, message.count)
        guard status == WM_OK else { throw failure(status, message) }
        wm_writer_close(handle)
        self.handle = nil
        do {
            try pending.commit()
        } catch let error as OutputFileError {
            throw Self.writeError(error)
        }
    }

    /// An output file's error (73 cannot create, 74 write failed) as this writer's, with the same code.
    private static func writeError(_ error: OutputFileError) -> VideoWriteError {
        VideoWriteError(error.code == .writeFailed ? .writeFailed : .cannotCreate, subject: error.subject,
                        reason: error.reason)
    }

    /// Frees the writer; an unfinished file is removed and what was at `path` stays. Idempotent.
    public func close() {
        if let handle { wm_writer_close(handle) }
        handle = nil
        pending.discard()
    }

    /// The error for a failed write; closes the writer and removes the incomplete file.
    private func failure(_ status: wm_status, _ message: [CChar]) -> VideoWriteError {
        close()
        guard status == WM_WRITE_FAILED else {
            return VideoWriteError(.internal, subject: path, reason: "encoding frame \(frameCount) failed")
        }
        return VideoWriteError(.writeFailed, subject: path,
                               reason: "writing failed: \(String(cString: message)); the incomplete file was removed")
    }
}

/// One stream of a media file (`MediaStreams.of(path:)`).
public struct MediaStream: Sendable, Equatable {
    /// The stream's media type (subtitles, data and attachments are `other`).
    public enum Kind: Sendable, Equatable { case video, audio, other }
    /// Video, audio or other.
    public var kind: Kind
    /// libavcodec's codec name: "h264", "mpeg4", "hevc", "aac", "mp3"...
    public var codec: String
    /// Packets in the stream (for a video stream, its frames).
    public var packets: Int
}

/// What a media file holds, read by FFmpeg's demuxer (no decoding).
public enum MediaStreams {
    /// The file's streams in container order (the first 16). Reads every packet to count them.
    /// - Throws: `CaptureError` `.missing`/`.unreadable` (exit 66) or `.notMedia` (65), as `VideoFileSource`.
    public static func of(path: String) throws -> [MediaStream] {
        var infos = [wm_stream_info](repeating: wm_stream_info(), count: 16)
        var count: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = wm_media_streams(path, &infos, Int32(infos.count), &count, &message, message.count)
        guard status == WM_OK else {
            throw CaptureError(VideoFileSource.code(status), subject: path, reason: String(cString: message))
        }
        return infos.prefix(Int(count)).map { info in
            var codec = info.codec
            let name = withUnsafeBytes(of: &codec) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return MediaStream(kind: info.is_video != 0 ? .video : info.is_audio != 0 ? .audio : .other, codec: name,
                               packets: Int(info.packets))
        }
    }
}
