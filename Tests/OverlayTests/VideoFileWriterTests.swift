import Capture
import Foundation
import Overlay
import Testing
import WinkCore

/// Overlay videos written with FFmpeg: H.264, the input's frames, size and rate, its audio copied packet for
/// packet. The layers are drawn at no face (`faces` returns none): the writing is what is tested here.
@Suite(.serialized)
struct VideoFileWriterTests {
    func streams(_ path: String) throws -> (video: [MediaStream], audio: [MediaStream]) {
        let all = try MediaStreams.of(path: path)
        return (all.filter { $0.kind == .video }, all.filter { $0.kind == .audio })
    }

    /// Runs the overlay over `input` into `name` in a fresh folder, writing through `VideoFileWriter`.
    func overlay(_ input: String, to name: String, encoders: [String] = VideoFileWriter.h264Encoders,
                 in folder: URL) throws -> (path: String, writer: VideoFileWriter?, frames: Int) {
        let output = folder.appendingPathComponent(name).path
        let renderer = try OverlayRenderer(layers: [], images: [])
        var writer: VideoFileWriter?
        let summary = try OverlayRun.run(
            source: try VideoFileSource(path: input), output: output, renderer: renderer,
            openVideo: { path, width, height, rate in
                guard VideoFileWriter.handles(path: path) else { return nil }
                writer = try VideoFileWriter(path: path, width: width, height: height, framesPerSecond: rate,
                                             audioFrom: input, encoders: encoders)
                return writer
            }, readBack: readBack
        ) { _ in [] }
        return (output, writer, summary.frames)
    }

    @Test(arguments: ["out.mp4", "out.mkv", "out.mov"])
    func aClipWithAudioKeepsItsFramesAndAudio(name: String) throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = Paths.video.appendingPathComponent("single_face.mp4").path
        let (inVideo, inAudio) = try streams(input)
        try #require(inAudio.count == 1 && inAudio[0].codec == "mp3", "the fixture has an MP3 track")
        let (output, writer, frames) = try overlay(input, to: name, in: folder)
        #expect(frames == 72)
        #expect(writer?.encoder == "libx264" && writer?.fallbackNote == nil && writer?.audioStreams == 1)
        let (video, audio) = try streams(output)
        #expect(video.map(\.codec) == ["h264"])
        #expect(video.first?.packets == inVideo[0].packets && video.first?.packets == 72)
        // The audio is the input's, packet for packet. (MP4 files the track as MPEG-1 audio, object type
        // 0x6B, "mp3"; reading the .mkv back, FFmpeg's Matroska demuxer names it by the layer its parser sees.)
        #expect(audio.count == 1 && ["mp3", "mp2"].contains(audio.first?.codec ?? ""), "\(audio)")
        #expect(audio.first?.packets == inAudio[0].packets)
        // Our own decoder reads it back whole, at the input's size and rate.
        let reread = try VideoFileSource(path: output)
        #expect(reread.width == 640 && reread.height == 360)
        #expect(abs((reread.nominalFrameRate ?? 0) - 30) < 0.1)
        let buffer = PixelBuffer()
        var count = 0, last = 0.0
        while let info = try reread.read(into: buffer) {
            count += 1
            last = info.time
        }
        #expect(count == 72)
        #expect(abs(last - 71.0 / 30) < 0.01, "frame times are i / 30 s")
    }

    /// A newcomer's finding: face_noface.mov (a variable rate: 24 fps for its title, 30 for the face) came
    /// out at one steady rate, its frames up to 0.36 s away from their copied audio. Each frame now keeps
    /// the input's own time.
    @Test(arguments: ["out.mp4", "out.mkv"])
    func aVariableRateKeepsEachFramesTime(name: String) throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = Paths.video.appendingPathComponent("face_noface.mov").path
        func times(_ path: String) throws -> [Double] {
            let source = try VideoFileSource(path: path)
            let buffer = PixelBuffer()
            var times: [Double] = []
            while let info = try source.read(into: buffer) { times.append(info.time) }
            return times
        }
        let (output, _, frames) = try overlay(input, to: name, in: folder)
        let given = try times(input)
        let written = try times(output)
        #expect(frames == given.count && written.count == given.count)
        let worst = zip(given, written).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 0.002, "frames moved by up to \(worst) s")
    }

    @Test func anAACTrackIsCopiedIntoAnMP4AndNoTrackMeansNoAudio() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let withAAC = Paths.video.appendingPathComponent("face_noface.mov").path
        let (inVideo, inAudio) = try streams(withAAC)
        try #require(inAudio.map(\.codec) == ["aac"] && inVideo.map(\.codec) == ["hevc"])
        let (output, _, frames) = try overlay(withAAC, to: "aac.mp4", in: folder)
        let (video, audio) = try streams(output)
        #expect(video.map(\.codec) == ["h264"] && video.first?.packets == frames)
        #expect(audio.map(\.codec) == ["aac"] && audio.first?.packets == inAudio[0].packets)

        let silent = Paths.video.appendingPathComponent("single_face_wink_left.mp4").path
        try #require(try streams(silent).audio.isEmpty)
        let (quiet, writer, quietFrames) = try overlay(silent, to: "silent.mp4", in: folder)
        #expect(writer?.audioStreams == 0)
        let out = try streams(quiet)
        #expect(out.video.map(\.codec) == ["h264"] && out.video.first?.packets == quietFrames && out.audio.isEmpty)
    }

    @Test func withoutAnH264EncoderItFallsBackToMPEG4AndSaysSo() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = Paths.video.appendingPathComponent("single_face.mp4").path
        let (output, writer, frames) = try overlay(input, to: "out.mp4", encoders: ["no-such-encoder"], in: folder)
        #expect(writer?.encoder == "mpeg4")
        #expect(writer?.fallbackNote == "no H.264 encoder (no-such-encoder) in this FFmpeg; \(output) is written "
            + "as MPEG-4 Part 2 instead")
        let (video, audio) = try streams(output)
        #expect(video.map(\.codec) == ["mpeg4"] && video.first?.packets == frames && frames == 72)
        #expect(audio.map(\.codec) == ["mp3"])
    }

    @Test func anOddSizeAndAnAVIKeepTheirWriters() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // 4:2:0 needs even sides: an odd frame is written as 4:4:4 H.264, at its own size.
        let path = folder.appendingPathComponent("odd.mkv").path
        let writer = try VideoFileWriter(path: path, width: 33, height: 17, framesPerSecond: 25)
        for i in 0..<5 { try writer.write(solidFrame(width: 33, height: 17, bgr: [UInt8(i * 40), 90, 200])) }
        try writer.finish()
        let reread = try VideoFileSource(path: path)
        #expect(reread.width == 33 && reread.height == 17)
        #expect(try streams(path).video.first?.packets == 5)
        // .avi stays with OpenCV's Motion JPEG writer.
        #expect(!VideoFileWriter.handles(path: "x.avi") && VideoFileWriter.handles(path: "dir/X.MKV"))
    }

    @Test func anOutputThatCannotBeCreatedIsExit73() {
        #expect {
            try VideoFileWriter(path: "/nonexistent-dir/x.mp4", width: 64, height: 48, framesPerSecond: 30)
        } throws: { error in
            let e = error as? VideoWriteError
            return e?.code == .cannotCreate && e?.exitCode.rawValue == 73
                && e?.description == "/nonexistent-dir/x.mp4: no such directory /nonexistent-dir"
        }
        #expect {
            try VideoFileWriter(path: "/tmp/x.mp4", width: 0, height: 48, framesPerSecond: 30)
        } throws: { error in (error as? VideoWriteError)?.code == .internal }
    }
}
