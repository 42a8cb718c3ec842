import Capture
import Foundation
import Testing
import WinkCore

/// An output named like one of the command's own inputs is refused before anything is written (exit 64):
/// `winkctl analyze me.png --plot me.png` replaced the photo with its plot, and `winkctl overlay -o` named
/// like a layer's image replaced the sunglasses with the overlaid photo (a newcomer's findings).
struct OwnInputsTests {
    static let photo = Binaries.fixture("images/expressions/single_face.jpg")

    @Test func aPlotNamedLikeTheInputIsRefusedAndTheInputKept() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let me = dir.appendingPathComponent("me.jpg")
        try FileManager.default.copyItem(atPath: Self.photo, toPath: me.path)
        let before = try Data(contentsOf: me)
        // The same file by another name too: "./" in front, and a symbolic link.
        let link = dir.appendingPathComponent("link.jpg")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: me)
        for plot in [me.path, dir.path + "/./me.jpg", link.path] {
            let r = try Binaries.run("winkctl", ["analyze", me.path, "--plot", plot, "--quiet"])
            #expect(r.status == 64, "\(plot): \(r.stderr)")
            let said = "winkctl: analyze: \(plot): the plot would overwrite the input; choose another --plot"
            #expect(r.stderrLines == [said])
        }
        // A configuration given with --config is an input too.
        let config = dir.appendingPathComponent("c.png")
        try Data("{}".utf8).write(to: config)
        let r = try Binaries.run("winkctl", ["analyze", me.path, "--config", config.path, "--plot", config.path])
        #expect(r.status == 64 && r.stderr.contains("the plot would overwrite the configuration"), "\(r.stderr)")
        #expect(try Data(contentsOf: me) == before)
        #expect(try Data(contentsOf: config) == Data("{}".utf8))
        // Another name is written as before.
        let fine = try Binaries.run("winkctl", ["analyze", me.path, "--plot", dir.appendingPathComponent("p.png").path])
        #expect(fine.status == 0, "\(fine.stderr)")
    }

    /// `winkctl calibrate -o` named like its recording or its --config replaced it with the profile.
    @Test func aProfileNamedLikeTheRecordingOrTheConfigurationIsRefused() throws {
        let dir = try Binaries.temporaryDirectory()
        let clip = dir.appendingPathComponent("sf.json")
        try FileManager.default.copyItem(atPath: Binaries.fixture("video/single_face.mp4"), toPath: clip.path)
        let config = dir.appendingPathComponent("c.json")
        try Data("{}".utf8).write(to: config)
        let before = try Data(contentsOf: clip)
        for (output, name) in [(clip.path, "recording"), (config.path, "configuration")] {
            let r = try Binaries.run(
                "winkctl", ["calibrate", "--source", clip.path, "--config", config.path, "-o", output,
                            "--segments", "neutral=0-0.6"])
            #expect(r.status == 64, "\(r.stderr)")
            #expect(r.stderrLines == [
                "winkctl: calibrate: \(output): the profile would overwrite the \(name); choose another -o"
            ])
        }
        #expect(try Data(contentsOf: clip) == before && (try Data(contentsOf: config)) == Data("{}".utf8))
    }

    @Test func anOverlayOutputNamedLikeALayerImageOrTheLayoutIsRefused() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = dir.appendingPathComponent("sg.png")
        try FileManager.default.copyItem(atPath: Binaries.fixture("overlays/sunglasses_rgba8.png"), toPath: image.path)
        let before = try Data(contentsOf: image)
        let layout = dir.appendingPathComponent("l.json")
        let layer = #"{"feature": "eyes", "image": "sg.png", "sizeRatio": {"width": 1.5, "height": 3}}"#
        try Data(#"{"layers": [\#(layer)]}"#.utf8).write(to: layout)
        let r = try Binaries.run("winkctl", ["overlay", "--layout", layout.path, Self.photo, "-o", image.path])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderrLines == [
            "winkctl: overlay: \(image.path): the output would overwrite the layout's image \(image.path); "
                + "choose another -o"
        ])
        #expect(try Data(contentsOf: image) == before)
        // The layout itself, named with a .png extension so that it passes the extension check.
        let pngLayout = dir.appendingPathComponent("layout.png")
        try FileManager.default.copyItem(at: layout, to: pngLayout)
        let own = try Binaries.run("winkctl", ["overlay", "--layout", pngLayout.path, Self.photo, "-o", pngLayout.path])
        #expect(own.status == 64 && own.stderr.contains("the output would overwrite the layout;"), "\(own.stderr)")
        let fine = try Binaries.run(
            "winkctl", ["overlay", "--layout", layout.path, Self.photo, "-o", dir.appendingPathComponent("o.png").path])
        #expect(fine.status == 0, "\(fine.stderr)")
    }
}

/// A newcomer's finding: `overlay odd.mp4 -o x.avi` (641x361) wrote 640x360 frames without a word, where
/// .mp4, .mov and .mkv keep the size. OpenCV's Motion JPEG writer takes even sizes only; the change is said.
struct AVISizeTests {
    @Test func anOddSizeWrittenToAVIIsSaid() throws {
        let dir = try Binaries.temporaryDirectory()
        let input = dir.appendingPathComponent("odd.mkv").path
        let writer = try VideoFileWriter(path: input, width: 641, height: 361, framesPerSecond: 10)
        let frame = PixelBuffer(wantsColor: true)
        frame.resize(width: 641, height: 361)
        for i in 0..<(641 * 361 * 3) { frame.bgr[i] = UInt8(i % 251) }
        for _ in 0..<3 { try writer.write(frame) }
        try writer.finish()
        let layout = dir.appendingPathComponent("empty.json")
        try Data(#"{"layers": []}"#.utf8).write(to: layout)
        let avi = dir.appendingPathComponent("out.avi").path
        let r = try Binaries.run("winkctl", ["overlay", "--layout", layout.path, input, "-o", avi])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderrLines.first == "overlay: \(avi): Motion JPEG in .avi takes even sizes: the 641x361 frames "
                + "were written as 640x360 (.mp4, .mov and .mkv keep the size)", "\(r.stderr)")
        let written = try VideoFileSource(path: avi)
        #expect(written.width == 640 && written.height == 360)
        let mkv = try Binaries.run("winkctl", ["overlay", "--layout", layout.path, input, "-o", dir.path + "/o.mkv"])
        #expect(mkv.status == 0 && !mkv.stderr.contains("even sizes"), "\(mkv.stderr)")
    }
}

/// A newcomer's finding: `overlay clip.mp4 -o out.m4v` said "0 audio streams copied" of a clip with an MP3
/// track, which .m4v does not take: the summary now says what was left out and why.
struct OverlayAudioSummaryTests {
    @Test func anAudioStreamLeftOutIsSaid() throws {
        let dir = try Binaries.temporaryDirectory()
        let layout = dir.appendingPathComponent("empty.json")
        try Data(#"{"layers": []}"#.utf8).write(to: layout)
        let clip = Binaries.fixture("video/single_face.mp4")
        for (name, said) in [
            ("o.m4v", "(H.264 (libx264), 0 of 1 audio streams copied; .m4v does not take mp3)"),
            ("o.mp4", "(H.264 (libx264), 1 audio stream copied)"),
        ] {
            let out = dir.appendingPathComponent(name).path
            let r = try Binaries.run("winkctl", ["overlay", "--layout", layout.path, clip, "-o", out])
            #expect(r.status == 0 && r.stderrLines.last == "overlay: 72 frame(s), 72 face(s) drawn -> \(out) \(said)",
                    "\(r.stderr)")
        }
    }

    /// A newcomer's finding: a recording with FLAC audio could not be overlaid to .mp4 or .mov at all ("writing
    /// the header failed: Experimental feature", exit 74, and "Invalid argument" for .mov): FFmpeg's codec table
    /// says both take FLAC, but MP4 muxes it only as an experiment and QuickTime not at all. The audio is now
    /// left out, as for any codec the container does not take; .mkv keeps it.
    @Test func audioTheContainerRefusesAtItsHeaderIsLeftOut() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let flac = dir.appendingPathComponent("tone.flac")
        try FLACStream.tone(seconds: 1).write(to: flac)
        let clip = dir.appendingPathComponent("clip.mkv").path
        let writer = try VideoFileWriter(path: clip, width: 64, height: 48, framesPerSecond: 10, audioFrom: flac.path)
        let frame = PixelBuffer(wantsColor: true)
        frame.resize(width: 64, height: 48)
        for i in 0..<(64 * 48 * 3) { frame.bgr[i] = UInt8(i % 251) }
        for _ in 0..<10 { try writer.write(frame) }
        try writer.finish()
        #expect(writer.audioStreams == 1, "the input clip has its FLAC track")
        let layout = dir.appendingPathComponent("empty.json")
        try Data(#"{"layers": []}"#.utf8).write(to: layout)
        for (name, said) in [
            ("o.mp4", "0 of 1 audio streams copied; .mp4 does not take flac"),
            ("o.mov", "0 of 1 audio streams copied; .mov does not take flac"),
            ("o.mkv", "1 audio stream copied"),
        ] {
            let out = dir.appendingPathComponent(name).path
            let r = try Binaries.run("winkctl", ["overlay", "--layout", layout.path, clip, "-o", out])
            #expect(r.status == 0, "\(name): \(r.stderr)")
            #expect(r.stderrLines.last == "overlay: 10 frame(s), 0 face(s) drawn -> \(out) (H.264 (libx264), \(said))",
                    "\(r.stderr)")
            #expect(try VideoFileSource(path: out).expectedFrameCount == 10)
        }
    }
}

/// A FLAC stream (Xiph's format specification, RFC 9639) of a 16-bit mono tone at 8 kHz in verbatim subframes:
/// enough for FFmpeg to read as a FLAC track, written here because no test may need the ffmpeg program.
enum FLACStream {
    static func tone(seconds: Double) -> Data {
        let rate = 8000, block = 1152
        let total = Int(seconds * Double(rate))
        var out = Data("fLaC".utf8)
        // STREAMINFO, the last metadata block: block sizes, frame sizes unknown (0), rate, 1 channel, 16 bits,
        // the sample count, no MD5 (0).
        out += [0x80, 0x00, 0x00, 34]
        out += [UInt8(block >> 8), UInt8(block & 0xFF), UInt8(block >> 8), UInt8(block & 0xFF), 0, 0, 0, 0, 0, 0]
        let packed = UInt64(rate) << 44 | UInt64(0) << 41 | UInt64(15) << 36 | UInt64(total)
        out += (0..<8).map { UInt8(truncatingIfNeeded: packed >> (56 - 8 * UInt64($0))) }
        out += [UInt8](repeating: 0, count: 16)
        var sample = 0, number = 0
        while sample < total {
            let count = min(block, total - sample)
            // Fixed blocking, block size from the 16-bit field at the header's end (code 0111) unless a full
            // 1152 (code 0011); rate from STREAMINFO (0000); mono (0000); 16 bits (100).
            var frame: [UInt8] = [0xFF, 0xF8, count == block ? 0x30 : 0x70, 0x08, UInt8(number)]
            if count != block { frame += [UInt8((count - 1) >> 8), UInt8((count - 1) & 0xFF)] }
            frame.append(crc8(frame))
            frame.append(0x02)  // a verbatim subframe, no wasted bits
            for i in sample..<(sample + count) {
                let v = Int16(8000 * sin(2 * Double.pi * 440 * Double(i) / Double(rate)))
                frame += [UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
            }
            let check = crc16(frame)
            frame += [UInt8(check >> 8), UInt8(check & 0xFF)]
            out += frame
            sample += count
            number += 1
        }
        return out
    }

    /// CRC-8, polynomial x^8 + x^2 + x + 1 (the frame header's).
    static func crc8(_ bytes: [UInt8]) -> UInt8 {
        var c: UInt8 = 0
        for b in bytes {
            c ^= b
            for _ in 0..<8 { c = c & 0x80 != 0 ? (c << 1) ^ 0x07 : c << 1 }
        }
        return c
    }

    /// CRC-16, polynomial x^16 + x^15 + x^2 + 1 (the frame's footer).
    static func crc16(_ bytes: [UInt8]) -> UInt16 {
        var c: UInt16 = 0
        for b in bytes {
            c ^= UInt16(b) << 8
            for _ in 0..<8 { c = c & 0x8000 != 0 ? (c << 1) ^ 0x8005 : c << 1 }
        }
        return c
    }
}
