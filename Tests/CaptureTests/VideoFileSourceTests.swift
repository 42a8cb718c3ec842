import CVideoCaptureReference
import CWinkMedia
import Capture
import Foundation
import Testing
import WinkCore

/// CWinkMedia decodes recordings with FFmpeg directly (OpenCV's videoio would bring ~55 MB of codec
/// libraries into winkd); these tests hold it to what OpenCV's VideoCapture gives for the same files.
struct VideoFileSourceTests {
    static let videos = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/fixtures/video")

    static let names = [
        "single_face.mp4", "single_face_wink_left.mp4", "single_face_wink_right.mp4",
        "no_face.mp4", "noface_face.mov", "face_noface.mov",
    ]

    @Test(arguments: names)
    func framesAndTimestampsAreVideoCapturesOwn(name: String) throws {
        let path = Self.videos.appendingPathComponent(name).path
        var ours: OpaquePointer?
        var message = [CChar](repeating: 0, count: 256)
        try #require(wm_video_open(path, &ours, &message, message.count) == WM_OK, "\(String(cString: message))")
        defer { wm_video_close(ours) }
        let reference = try #require(vcr_open(path))
        defer { vcr_close(reference) }
        var w: Int32 = 0
        var h: Int32 = 0
        var fps: Double = 0
        wm_video_info(ours, &w, &h, &fps)
        #expect(w > 0 && h > 0 && fps > 0)
        let n = Int(w) * Int(h)
        var a = [UInt8](repeating: 0, count: n)
        var b = [UInt8](repeating: 0, count: n)
        var frames = 0
        var differingFrames = 0
        var worstTimeError = 0.0
        var lastTime = -1.0
        var drained = 0
        while true {
            var msA = 0.0
            var msB = 0.0
            let sa = wm_video_read(ours, &a, nil, &msA)
            let sb = vcr_read(reference, &b, w, h, &msB)
            #expect(sb != -1, "VideoCapture frame \(frames) has another size")
            #expect((sa == WM_OK) == (sb == 1), "\(name): one decoder ended at frame \(frames), the other did not")
            guard sa == WM_OK, sb == 1 else { break }
            if a != b { differingFrames += 1 }
            // VideoCapture reports 0 for the frames flushed out of the decoder at the end of the file
            // (its picture_pts is reset); ours keep their own timestamps, which only need to go on rising.
            // It also puts the first frame of the HEVC .mov files 17 and 28 ms before zero (a decoding
            // time, not the presentation time, which is the stream's start: 0 here).
            if frames > 0 && msB == 0 {
                drained += 1
            } else if frames == 0 && msB < 0 {
                #expect(msA == 0 && msB > -50, "\(name): first frame at \(msA) ms, VideoCapture \(msB) ms")
            } else {
                worstTimeError = max(worstTimeError, abs(msA - msB))
            }
            #expect(msA > lastTime, "\(name): frame \(frames) at \(msA) ms after \(lastTime) ms")
            lastTime = msA
            frames += 1
        }
        #expect(frames > 20 && drained < 8)
        #expect(differingFrames == 0, "\(name): \(differingFrames) of \(frames) frames differ from VideoCapture's")
        #expect(worstTimeError < 1e-6, "\(name): timestamps differ by up to \(worstTimeError) ms")
    }

    @Test func variableFrameRateKeepsContainerTimes() throws {
        // noface_face.mov: a 24 fps title then 30 fps face (NOTES.md); the steps between frames show both.
        let source = try VideoFileSource(path: Self.videos.appendingPathComponent("noface_face.mov").path)
        let buffer = PixelBuffer()
        var times: [Double] = []
        while let info = try source.read(into: buffer) { times.append(info.time) }
        let steps = Set(zip(times.dropFirst(), times).map { (($0 - $1) * 1000).rounded() })
        #expect(times.first == 0)
        #expect(steps.contains(42) && steps.contains(33), "steps in ms: \(steps.sorted())")
    }

    @Test func badFilesAreRefusedWithAReason() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("winkd-video-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = dir.appendingPathComponent("notes.mp4")
        try Data("this is not a video\n".utf8).write(to: text)
        let empty = dir.appendingPathComponent("empty.mp4")
        try Data().write(to: empty)
        // A header FFmpeg refuses: its return code read "Device or resource busy" (a newcomer's finding); its
        // own reason was in the log winkd silences.
        let huge = dir.appendingPathComponent("huge.y4m")
        try Data("YUV4MPEG2 W60000 H60000 F30:1 Ip A1:1 C420jpeg\nFRAME\n".utf8).write(to: huge)
        let cases: [(String, CaptureErrorCode, String)] = [
            (dir.appendingPathComponent("absent.mp4").path, .missing, "no such file"),
            (dir.path, .unreadable, "is a directory"),
            (empty.path, .notMedia, "empty file"),
            (text.path, .notMedia, "not a video FFmpeg can read"),
            (huge.path, .notMedia, "not a video FFmpeg can read (Picture size 60000x60000 is invalid)"),
        ]
        for (path, code, reason) in cases {
            let error = #expect(throws: CaptureError.self) { try VideoFileSource(path: path) }
            #expect(error?.code == code, "\(path)")
            #expect(error?.description.contains(reason) == true, "\(error?.description ?? "")")
        }
    }

    /// A stream whose frame size changes part way goes on at the first size, the new pictures rescaled
    /// (bicubic); it used to end silently at the change. Here a raw Motion-JPEG stream spliced from photos
    /// of two sizes (500x375, then 360x480). (Debian's VideoCapture is no yardstick here: after the change
    /// it repeats the last 500x375 picture.)
    @Test func aFrameSizeChangeGoesOnAtTheFirstSize() throws {
        let photos = Self.videos.deletingLastPathComponent().appendingPathComponent("images/dlib")
        let wide = try Data(contentsOf: photos.appendingPathComponent("2007_007763.jpg"))
        let tallPath = photos.appendingPathComponent("2008_001009.jpg")
        let tall = try Data(contentsOf: tallPath)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("winkd-splice-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("spliced.mjpeg")
        try (Array(repeating: wide, count: 5) + Array(repeating: tall, count: 5)).reduce(Data(), +).write(to: file)
        let source = try VideoFileSource(path: file.path)
        #expect(source.width == 500 && source.height == 375)
        let buffer = PixelBuffer()
        var means: [Double] = []
        var lastTime = -1.0
        var fifth: [UInt8] = []
        var last: [UInt8] = []
        while let info = try source.read(into: buffer) {
            #expect(buffer.width == 500 && buffer.height == 375 && info.time > lastTime)
            lastTime = info.time
            let pixels = Array(UnsafeBufferPointer(start: buffer.gray, count: 500 * 375))
            means.append(Double(pixels.reduce(0) { $0 + Int($1) }) / Double(pixels.count))
            if means.count == 5 { fifth = pixels }
            last = pixels
        }
        #expect(means.count == 10)
        // The second photo is shown (not the first repeated), at the first size, with its own brightness.
        let change = zip(fifth, last).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) } / max(1, last.count)
        #expect(change > 20, "mean change \(change) grey levels")
        let still = try StillImageSource(path: tallPath.path)
        let original = PixelBuffer()
        _ = try still.read(into: original)
        let n = original.width * original.height
        let stillMean =
            Double(UnsafeBufferPointer(start: original.gray, count: n).reduce(0) { $0 + Int($1) }) / Double(n)
        #expect(abs(means[9] - stillMean) < 2, "rescaled mean \(means[9]), photo \(stillMean)")
    }

    /// A display matrix (an MP4 track header's, as `ffmpeg -metadata:s:v rotate=N` writes it) turns the
    /// frames upright as FFmpeg's own tools show them: "rotate=90" is a quarter turn clockwise. The
    /// recording here is single_face.mp4 with only its track matrix changed, so every frame must be the
    /// upright one turned, pixel for pixel.
    @Test(arguments: [90, 180, 270])
    func aRotatedRecordingComesUpright(degrees: Int) throws {
        let original = Self.videos.appendingPathComponent("single_face.mp4")
        var data = try Data(contentsOf: original)
        let tkhd = try #require(data.range(of: Data("tkhd".utf8))).lowerBound
        try #require(data[tkhd + 4] == 0, "a version 0 track header")
        // a b u / c d v / x y w in 16.16 (2.30 for u, v, w); movenc.c's matrices for rotate=90/180/270.
        let matrix: [Int32] =
            switch degrees {
            case 90: [0, 65536, 0, -65536, 0, 0, 360 << 16, 0, 1 << 30]
            case 180: [-65536, 0, 0, 0, -65536, 0, 640 << 16, 360 << 16, 1 << 30]
            default: [0, -65536, 0, 65536, 0, 0, 0, 640 << 16, 1 << 30]
            }
        let bytes = matrix.flatMap { v in
            (0..<4).map { UInt8(truncatingIfNeeded: UInt32(bitPattern: v) >> (24 - 8 * $0)) }
        }
        data.replaceSubrange((tkhd + 44)..<(tkhd + 80), with: bytes)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("winkd-rotate-\(getpid())-\(degrees)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let rotatedFile = dir.appendingPathComponent("rotated.mp4")
        try data.write(to: rotatedFile)

        let upright = try VideoFileSource(path: original.path)
        let turned = try VideoFileSource(path: rotatedFile.path)
        let (w, h) = (upright.width, upright.height)
        #expect(degrees == 180 ? (turned.width == w && turned.height == h) : (turned.width == h && turned.height == w))
        let a = PixelBuffer()
        let b = PixelBuffer()
        for frame in 0..<5 {
            try #require(try upright.read(into: a) != nil && turned.read(into: b) != nil)
            try #require(b.width * b.height == w * h && b.width == (degrees == 180 ? w : h))
            let src = UnsafeBufferPointer(start: a.gray, count: w * h)
            let out = UnsafeBufferPointer(start: b.gray, count: w * h)
            var differing = 0
            for y in 0..<b.height {
                for x in 0..<b.width {
                    let expected =
                        switch degrees {
                        case 90: src[(h - 1 - x) * w + y]  // clockwise
                        case 180: src[(h - 1 - y) * w + (w - 1 - x)]
                        default: src[x * w + (w - 1 - y)]  // counter-clockwise
                        }
                    if out[y * b.width + x] != expected { differing += 1 }
                }
            }
            #expect(differing == 0, "\(degrees) degrees, frame \(frame): \(differing) pixels differ")
        }
    }

    @Test func pipesAndDevicesAreNotRecordings() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("winkd-fifo-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("video.mp4").path
        try #require(mkfifo(fifo, 0o600) == 0)
        for path in [fifo, "/dev/zero"] {
            let error = #expect(throws: CaptureError.self) { try openMediaFile(path: path) }
            #expect(
                error?.code == .unreadable && error?.description.contains("not a regular file") == true,
                "\(error?.description ?? "")")
        }
    }

    @Test func aFileWithoutAVideoStreamSaysSo() throws {
        // A still under a video's name: FFmpeg reads it as a one-frame video (no plugin needed).
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("winkd-still-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let disguised = dir.appendingPathComponent("photo.dat")
        try FileManager.default.copyItem(
            at: Self.videos.deletingLastPathComponent()
                .appendingPathComponent("images/dlib/2008_001009.jpg"), to: disguised)
        let source = try openMediaFile(path: disguised.path)
        let buffer = PixelBuffer()
        #expect(try source.read(into: buffer) != nil && buffer.width == 360 && buffer.height == 480)
        #expect(try source.read(into: buffer) == nil)
        // Noise: FFmpeg's reason, not a generic one. Fixed bytes (a linear congruential sequence): fresh random
        // bytes made the test flaky, since now and then FFmpeg probes them as an audio-only stream ("no video
        // stream in it", found by a clean-clone run).
        let noise = dir.appendingPathComponent("noise.mp4")
        var state: UInt32 = 12345
        let bytes = (0..<4096).map { _ -> UInt8 in
            state = state &* 1_103_515_245 &+ 12345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
        try Data(bytes).write(to: noise)
        let error = #expect(throws: CaptureError.self) { try openMediaFile(path: noise.path) }
        #expect(
            error?.code == .notMedia && error?.description.contains("FFmpeg") == true, "\(error?.description ?? "")")
    }

    @Test func aTruncatedRecordingEndsEarlyWithoutCrashing() throws {
        let whole = try Data(contentsOf: Self.videos.appendingPathComponent("single_face.mp4"))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("winkd-trunc-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // Cut from the front (no header: refused) and from the back (frames until the cut).
        let tail = dir.appendingPathComponent("tail.mp4")
        try whole.suffix(whole.count / 2).write(to: tail)
        let head = dir.appendingPathComponent("head.mp4")
        try whole.prefix(whole.count * 2 / 3).write(to: head)
        for path in [tail.path, head.path] {
            guard let source = try? VideoFileSource(path: path) else { continue }
            let buffer = PixelBuffer()
            var frames = 0
            while (try source.read(into: buffer)) != nil { frames += 1 }
            #expect(frames < 72, "\(path) gave \(frames) frames")
        }
    }

    /// A newcomer's finding: a truncated or damaged recording was read without a word (exit 0; after the
    /// damage, frame numbers count only the frames that decoded). The source now says what is wrong
    /// (`damage`, which winkctl prints and winkd sends as `source_damaged`), and nothing for a whole file.
    @Test func aDamagedOrTruncatedRecordingSaysSo() throws {
        func readAll(_ path: String) throws -> (frames: Int, damage: String?) {
            let source = try VideoFileSource(path: path)
            let buffer = PixelBuffer()
            var frames = 0
            while (try source.read(into: buffer)) != nil { frames += 1 }
            source.close()
            return (frames, source.damage)
        }
        // Whole files say nothing: no_face.mp4 shows 95 of the 98 frames it stores (an MP4 edit list; FFmpeg's
        // own tools show the same 95), which is not damage.
        for name in Self.names {
            let whole = try readAll(Self.videos.appendingPathComponent(name).path)
            #expect(whole.damage == nil, "\(name): \(whole.damage ?? "")")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("winkd-damage-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // Its index first (tpsmm_driving_vox.mp4 stores moov before mdat), cut in half: it opens and plays
        // until the cut.
        let indexFirst = Self.videos.deletingLastPathComponent()
            .appendingPathComponent("people/video/tpsmm_driving_vox.mp4")
        let data = try Data(contentsOf: indexFirst)
        let cut = dir.appendingPathComponent("cut.mp4")
        try data.prefix(data.count / 2).write(to: cut)
        let truncated = try readAll(cut.path)
        let declared = try readAll(indexFirst.path).frames
        #expect(truncated.frames > 0 && truncated.frames < declared)
        let said = try #require(truncated.damage)
        let declares = " of the \(declared) frames its container declares (truncated?)"
        #expect(said.contains("it holds ") && said.hasSuffix(declares), "\(said)")
        // 30,000 bytes of noise (fixed seed) in the middle of single_face.mp4's media data.
        var bytes = [UInt8](try Data(contentsOf: Self.videos.appendingPathComponent("single_face.mp4")))
        var state: UInt64 = 0x5EED
        for i in 80_000..<110_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[i] = UInt8(truncatingIfNeeded: state >> 33)
        }
        let noisy = dir.appendingPathComponent("noisy.mp4")
        try Data(bytes).write(to: noisy)
        let damaged = try readAll(noisy.path)
        #expect(damaged.frames < 72)
        let reason = try #require(damaged.damage)
        let skipped = " skipped or concealed (later frames are numbered as decoded)"
        #expect(reason.hasSuffix(skipped) && reason.contains(" damaged packet"), "\(reason)")
        // 50 zero bytes in the video data (at 60% of liveportrait_d18.mp4): H.264 decodes every frame,
        // concealing the damage, and says so only in its log (a newcomer saw a winkLeft appear with no word).
        var zeroed = [UInt8](try Data(contentsOf: Self.videos.deletingLastPathComponent()
            .appendingPathComponent("people/video/liveportrait_d18.mp4")))
        let at = zeroed.count * 6 / 10
        for i in at..<(at + 50) { zeroed[i] = 0 }
        let concealed = dir.appendingPathComponent("zeroed.mp4")
        try Data(zeroed).write(to: concealed)
        let quiet = try readAll(concealed.path)
        #expect(quiet.damage?.hasSuffix(skipped) == true, "\(quiet.frames) frames, \(quiet.damage ?? "no damage said")")
    }

    /// A container that counts no frames (Matroska) and was cut short said nothing: its frames ended early
    /// and the run reported a whole file. Its declared duration tells it now; a whole one says nothing, its
    /// audio track (which the file's duration also counts) included.
    @Test func aMatroskaFileCutShortSaysSo() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("winkd-mkvcut-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = Self.videos.appendingPathComponent("single_face.mp4").path
        let whole = dir.appendingPathComponent("whole.mkv")
        let source = try VideoFileSource(path: input)
        let writer = try VideoFileWriter(path: whole.path, width: source.width, height: source.height,
                                         framesPerSecond: 30, audioFrom: input)
        let buffer = PixelBuffer(wantsColor: true)
        while let info = try source.read(into: buffer) { try writer.write(buffer, time: info.time) }
        try writer.finish()
        func readAll(_ url: URL) throws -> (frames: Int, damage: String?) {
            let source = try VideoFileSource(path: url.path)
            let buffer = PixelBuffer()
            var frames = 0
            while (try source.read(into: buffer)) != nil { frames += 1 }
            source.close()
            return (frames, source.damage)
        }
        let read = try readAll(whole)
        #expect(read.frames == 72 && read.damage == nil, "\(read)")
        let data = try Data(contentsOf: whole)
        let cut = dir.appendingPathComponent("cut.mkv")
        try data.prefix(data.count * 6 / 10).write(to: cut)
        let short = try readAll(cut)
        #expect(short.frames > 0 && short.frames < 60, "\(short.frames) frames")
        // 72 frames at 30 fps: the container declares 2.4 s.
        let said = try #require(short.damage)
        #expect(said.hasPrefix("its frames end at "), "\(said)")
        #expect(said.hasSuffix(" of the 2.4 s its container declares (truncated?)"), "\(said)")
        // A newcomer's finding: a whole file whose video track is shorter than its audio was "truncated?"
        // (the file's duration counts the audio); the track's own DURATION tag is its length.
        let shortVideo = dir.appendingPathComponent("short-video.mkv")
        let again = try VideoFileSource(path: input)
        let shortWriter = try VideoFileWriter(path: shortVideo.path, width: again.width, height: again.height,
                                              framesPerSecond: 30, audioFrom: input)
        var written = 0
        while written < 30, let info = try again.read(into: buffer) {
            try shortWriter.write(buffer, time: info.time)
            written += 1
        }
        try shortWriter.finish()
        let shortRead = try readAll(shortVideo)
        #expect(shortRead.frames == 30 && shortRead.damage == nil, "\(shortRead)")
    }

    /// A newcomer's finding: a video of non-square pixels (320x360 stored, 2:1 pixels) was read at its stored
    /// size, so faces were squashed and not found. Frames now come at the size players show.
    @Test func nonSquarePixelsAreShownSquare() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("anamorphic-\(getpid()).y4m")
        defer { try? FileManager.default.removeItem(at: url) }
        // A YUV4MPEG2 stream declares its pixel aspect in the header (A2:1): three grey 64x48 frames.
        var data = Data("YUV4MPEG2 W64 H48 F30:1 Ip A2:1 C420jpeg\n".utf8)
        for _ in 0..<3 { data += Data("FRAME\n".utf8) + Data(repeating: 128, count: 64 * 48 * 3 / 2) }
        try data.write(to: url)
        let source = try VideoFileSource(path: url.path)
        #expect(source.width == 128 && source.height == 48)
        let buffer = PixelBuffer()
        var frames = 0
        while try source.read(into: buffer) != nil {
            frames += 1
            #expect(buffer.width == 128 && buffer.height == 48)
        }
        #expect(frames == 3)
    }

    /// A cover picture stored as the first video stream was read as the whole file: one frame, no face, no
    /// word. The film is read, as FFmpeg's own tools choose it. Here an AVI made of two fixture photos: stream 0
    /// one 360x480 picture (the cover), stream 1 ten frames of a 500x375 photo at 10 fps (Motion JPEG).
    /// A newcomer's finding: an AVI made from a variable-rate recording was "it holds 169 of the 762 frames
    /// its container declares (truncated?)": its header counts the slots of its timeline, some of them empty
    /// chunks. Only an MP4/QuickTime sample count is taken as the number of frames; the timeline is judged by
    /// its duration.
    @Test func anAVIWithEmptyFrameSlotsIsNotCalledTruncated() throws {
        let photos = Self.videos.deletingLastPathComponent().appendingPathComponent("images/dlib")
        let film = try Data(contentsOf: photos.appendingPathComponent("2007_007763.jpg"))
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("slots-\(getpid()).avi")
        defer { try? FileManager.default.removeItem(at: url) }
        // 20 slots at 10 fps, every other one empty (a frame repeated by the player).
        let slots = (0..<20).map { $0 % 2 == 0 ? film : Data() }
        try Self.motionJPEGAVI(streams: [(500, 375, slots)]).write(to: url)
        let source = try VideoFileSource(path: url.path)
        let buffer = PixelBuffer()
        var times: [Double] = []
        while let info = try source.read(into: buffer) { times.append(info.time) }
        #expect(times.count == 10 && abs((times.last ?? 0) - 1.8) < 0.01, "\(times)")
        #expect(source.damage == nil, "\(source.damage ?? "")")
    }

    @Test func aCoverPictureBeforeTheFilmIsPassedOver() throws {
        let photos = Self.videos.deletingLastPathComponent().appendingPathComponent("images/dlib")
        let cover = try Data(contentsOf: photos.appendingPathComponent("2008_001009.jpg"))
        let film = try Data(contentsOf: photos.appendingPathComponent("2007_007763.jpg"))
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("cover-first-\(getpid()).avi")
        defer { try? FileManager.default.removeItem(at: url) }
        try Self.motionJPEGAVI(streams: [(360, 480, [cover]), (500, 375, Array(repeating: film, count: 10))])
            .write(to: url)
        let source = try VideoFileSource(path: url.path)
        #expect(source.width == 500 && source.height == 375)
        let buffer = PixelBuffer()
        var times: [Double] = []
        while let info = try source.read(into: buffer) {
            #expect(buffer.width == 500 && buffer.height == 375)
            times.append(info.time)
        }
        #expect(times.count == 10)
        #expect(abs((times.last ?? 0) - 0.9) < 0.01, "last frame at \(times.last ?? -1) s")
        #expect(source.damage == nil)
        #expect(!source.isStill)
    }

    /// A RIFF AVI (no index) of Motion JPEG video streams at 10 fps, each of its size and JPEG frames, the
    /// streams' chunks one after the other ('00dc', then '01dc', ...).
    static func motionJPEGAVI(streams: [(width: Int, height: Int, frames: [Data])]) -> Data {
        func le(_ values: [Int], _ bytes: Int) -> Data {
            var d = Data()
            for v in values { for i in 0..<bytes { d.append(UInt8((UInt64(bitPattern: Int64(v)) >> (8 * i)) & 0xff)) } }
            return d
        }
        func chunk(_ tag: String, _ body: Data) -> Data {
            Data(tag.utf8) + le([body.count], 4) + body + (body.count % 2 == 1 ? Data([0]) : Data())
        }
        func list(_ kind: String, _ body: Data) -> Data { chunk("LIST", Data(kind.utf8) + body) }
        let first = streams[0]
        // avih: µs per frame, max bytes/s, padding, flags, frames, initial frames, streams, buffer, size, reserved.
        var header = chunk("avih", le([100_000, 0, 0, 0, first.frames.count, 0, streams.count, 0, first.width,
                                         first.height, 0, 0, 0, 0], 4))
        for s in streams {
            // strh: type, handler, flags, priority+language, initial frames, scale, rate (10/1), start, length,
            // buffer, quality (-1), sample size, frame rectangle.
            let strh = Data("vidsMJPG".utf8) + le([0], 4) + le([0, 0], 2)
                + le([0, 1, 10, 0, s.frames.count, 0, -1, 0], 4) + le([0, 0, s.width, s.height], 2)
            // strf: BITMAPINFOHEADER.
            let strf = le([40, s.width, s.height], 4) + le([1, 24], 2) + Data("MJPG".utf8)
                + le([s.width * s.height * 3, 0, 0, 0, 0], 4)
            header += list("strl", chunk("strh", strh) + chunk("strf", strf))
        }
        var movi = Data()
        for (i, s) in streams.enumerated() {
            for frame in s.frames { movi += chunk(String(format: "%02ddc", i), frame) }
        }
        let body = Data("AVI ".utf8) + list("hdrl", header) + list("movi", movi)
        return Data("RIFF".utf8) + le([body.count], 4) + body
    }

    /// Only a file of one picture is still: the fixture videos are not, a photo FFmpeg reads by its content is.
    @Test func onlyAFileOfOnePictureIsStill() throws {
        for name in Self.names {
            let video = try VideoFileSource(path: Self.videos.appendingPathComponent(name).path)
            #expect(!video.isStill, "\(name)")
        }
        let photo = Self.videos.deletingLastPathComponent().appendingPathComponent("images/dlib/2007_007763.jpg")
        #expect(try VideoFileSource(path: photo.path).isStill)
    }
}
