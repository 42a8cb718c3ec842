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
}
