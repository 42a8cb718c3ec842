import Capture
import Foundation
import TestSupport
import Testing
import WinkCore

/// Faults a newcomer found by trying the programs with bad input, each with the input that showed it.
@Suite(.serialized)
struct NewcomerFindingsTests {
    @Test func theDaemonJudgesAStillImageAsAnalyzeDoes() throws {
        let dir = try Binaries.temporaryDirectory()
        let socket = dir.appendingPathComponent("s.sock").path
        let daemon = Process()
        daemon.executableURL = Binaries.directory.appendingPathComponent("winkd")
        daemon.arguments = ["--source", Binaries.fixture("images/expressions/0-f1-su-ph.jpg"), "--socket", socket]
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        #expect(Wait.forFile(socket), "winkd did not create \(socket)")
        let r = try Binaries.run("winkctl", ["events", "--socket", socket])
        daemon.waitUntilExit()
        #expect(
            r.stdout.contains("\"event\":\"faceFound\"") && r.stdout.contains("\"event\":\"mouthOpen\""), "\(r.stdout)")
    }

    @Test func aDeviceThatIsNotACameraIsRefusedAtStart() throws {
        let socket = try Binaries.temporaryDirectory().appendingPathComponent("s.sock").path
        let r = try Binaries.run("winkd", ["--source", "/dev/null", "--socket", socket])
        #expect(r.status == 69)
        #expect(r.stderrLines == ["winkd: /dev/null: not a V4L2 video device"])
    }

    @Test func anEmptyEventListIsAUsageError() throws {
        let r = try Binaries.run("winkctl", ["events", "--socket", "/nonexistent.sock", "--events", ",,,"])
        #expect(r.status == 64 && r.stderrLines.count == 1)
        // A stray comma was dropped without a word.
        let stray = try Binaries.run("winkctl", ["events", "--socket", "/nonexistent.sock", "--events", "smile,"])
        #expect(stray.status == 64)
        let said = "winkctl: --events: an empty name in 'smile,' (a stray comma?)"
        #expect(stray.stderrLines == [said], "\(stray.stderr)")
    }

    /// `winkd --socket ""` used to try to bind an empty path and exit 69 ("winkd: : empty socket path").
    @Test func anEmptyOptionValueIsAUsageError() throws {
        let r = try Binaries.run("winkd", ["--socket", "", "--source", Binaries.fixture("video/single_face.mp4")])
        #expect(r.status == 64)
        #expect(r.stderrLines.first == "winkd: --socket needs a value, not an empty string", "\(r.stderr)")
        let e = try Binaries.run("winkctl", ["analyze", Binaries.fixture("video/single_face.mp4"), "--config="])
        #expect(e.status == 64 && e.stderr.contains("--config needs a value"), "\(e.stderr)")
    }

    @Test func overlayRefusesToOverwriteItsInput() throws {
        let dir = try Binaries.temporaryDirectory()
        let input = dir.appendingPathComponent("face.jpg")
        try FileManager.default.copyItem(
            atPath: Binaries.fixture("images/expressions/single_face.jpg"), toPath: input.path)
        let before = try Data(contentsOf: input)
        let layout = dir.appendingPathComponent("layout.json")
        try Data(
            #"{"layers": [{"feature": "eyes", "image": "\#(Binaries.fixture("overlays/sunglasses_rgba8.png"))"}]}"#.utf8
        )
        .write(to: layout)
        let r = try Binaries.run("winkctl", ["overlay", "--layout", layout.path, input.path, "-o", input.path])
        #expect(r.status == 64 && r.stderr.contains("overwrite"), "\(r.stderr)")
        #expect(try Data(contentsOf: input) == before)
    }

    /// Ctrl-C during `winkctl overlay IN -o OUT` destroyed the file already at OUT and left a broken one
    /// ("moov atom not found"); the same on a full disk. The output is now written beside OUT and renamed
    /// over it when complete; a stop removes the partial file and exits 128 + the signal.
    @Test func overlayStoppedBySIGINTKeepsTheFileAlreadyThere() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = dir.appendingPathComponent("out.mp4")
        let old = Data("precious".utf8)
        try old.write(to: output)
        let layout = dir.appendingPathComponent("layout.json")
        try Data(
            #"{"layers": [{"feature": "eyes", "image": "\#(Binaries.fixture("overlays/sunglasses_rgba8.png"))"}]}"#.utf8
        )
        .write(to: layout)
        func partials() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.contains(".partial-") }
        }
        let errors = dir.appendingPathComponent("stderr.txt")
        try #require(FileManager.default.createFile(atPath: errors.path, contents: nil))
        let p = Process()
        p.executableURL = Binaries.directory.appendingPathComponent("winkctl")
        // 20 s of video: still being written when the signal comes, however busy the machine.
        p.arguments = [
            "overlay", "--layout", layout.path, Binaries.fixture("people/video/liveportrait_d9.mp4"),
            "-o", output.path, "--quiet",
        ]
        p.standardError = try FileHandle(forWritingTo: errors)
        try p.run()
        let writing = Wait.until { !partials().isEmpty }  // the first frame's output is open
        kill(p.processIdentifier, SIGINT)
        #expect(Wait.forExit(p))
        #expect(writing, "no partial output appeared")
        #expect(p.terminationStatus == 130)
        #expect(try Data(contentsOf: output) == old)
        #expect(partials().isEmpty)
        let said = try String(contentsOf: errors, encoding: .utf8)
        #expect(said == "overlay: stopped by SIGINT; \(output.path) was left as it was\n", "\(said)")
    }

    /// A truncated recording was analysed without a word (exit 0) and played by winkd to `bye end_of_input`
    /// as if whole. Both now say so: one warning line, and a `source_damaged` status before `bye`.
    @Test func aTruncatedRecordingIsSaidToBeSo() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cut = try Binaries.truncatedFixture("people/video/tpsmm_driving_vox.mp4", in: dir, as: "cut.mp4")
        let r = try Binaries.run("winkctl", ["analyze", cut, "--quiet"])
        #expect(r.status == 0)
        // One line: the last, cut packet is concealed too ("1 damaged packet skipped or concealed (...); it
        // holds 121 of the 243 frames its container declares (truncated?)").
        let line = r.stderrLines.first ?? ""
        #expect(r.stderrLines.count == 1 && line.hasPrefix("analyze: \(cut): ") && line.contains("it holds "),
                "\(r.stderr)")
        #expect(r.stdout.contains("\"faceFound\""), "the frames before the cut are analysed")

        let socket = dir.appendingPathComponent("s.sock").path
        let daemon = Process()
        daemon.executableURL = Binaries.directory.appendingPathComponent("winkd")
        daemon.arguments = ["--source", cut, "--socket", socket, "--pace", "fast"]
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        #expect(Wait.forFile(socket), "winkd did not create \(socket)")
        let events = try Binaries.run("winkctl", ["events", "--socket", socket])
        #expect(Wait.forExit(daemon))
        let lines = events.stdout.split(separator: "\n")
        let damaged = try #require(lines.firstIndex { $0.contains("\"source_damaged\"") }, "\(events.stdout)")
        let bye = try #require(lines.firstIndex { $0.contains("\"bye\"") })
        #expect(damaged < bye && lines[damaged].contains("frames its container declares (truncated?)"))
    }

    /// No size limit applied to recordings: a 425 KB PNG of 20000x20000 took 1.7 GB and 11 s to analyse, a
    /// 124 KB video of 16000x16000 frames 1.9 GB. Frames over 16384 a side or 8192x8192 in all are refused
    /// from the header (65, saying the limit). OPENCV_IO_MAX_IMAGE_PIXELS in the environment is replaced:
    /// OpenCV aborted the process on "abc".
    @Test func recordingsOverTheSizeLimitAreRefusedFromTheirHeader() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let still = dir.appendingPathComponent("huge.png").path
        try BlackPNG.data(width: 20000, height: 20000).write(to: URL(fileURLWithPath: still))
        let limit = "over the limit of 16384 pixels a side and 67108864 pixels in all (8192x8192)"
        let r = try Binaries.run("winkctl", ["analyze", still, "--quiet"])
        #expect(r.status == 65 && r.stderrLines == ["winkctl: \(still): \(limit)"], "\(r.stderr)")
        for value in ["abc", "-1", "100", "1000000000000"] {
            let e = try Binaries.run(
                "winkctl", ["analyze", still, "--quiet"], environment: ["OPENCV_IO_MAX_IMAGE_PIXELS": value])
            #expect(e.status == 65 && e.stderrLines == ["winkctl: \(still): \(limit)"], "\(value): \(e.stderr)")
        }
        // A side over 16384 with few pixels in all (20000x2) passed the pixel count alone.
        let wide = dir.appendingPathComponent("wide.png").path
        try BlackPNG.data(width: 20000, height: 2).write(to: URL(fileURLWithPath: wide))
        let w = try Binaries.run("winkctl", ["analyze", wide, "--quiet"])
        #expect(w.status == 65 && w.stderrLines == ["winkctl: \(wide): \(limit)"], "\(w.stderr)")
        let photo = try Binaries.run(
            "winkctl", ["analyze", Binaries.fixture("images/expressions/single_face.jpg"), "--quiet"],
            environment: ["OPENCV_IO_MAX_IMAGE_PIXELS": "100"])
        #expect(photo.status == 0 && photo.stdout.contains("\"smile\""), "\(photo.stderr)")
        // A YUV4MPEG2 stream's header declares its size: 16000x16000, one (empty) frame.
        let video = dir.appendingPathComponent("huge.y4m").path
        try Data("YUV4MPEG2 W16000 H16000 F2:1 Ip A1:1 C420jpeg\nFRAME\n".utf8).write(to: URL(fileURLWithPath: video))
        let v = try Binaries.run("winkctl", ["analyze", video, "--quiet"])
        #expect(v.status == 65 && v.stderrLines == ["winkctl: \(video): 16000x16000 pixels, \(limit)"], "\(v.stderr)")
        let d = try Binaries.run("winkd", ["--source", video, "--socket", dir.appendingPathComponent("s.sock").path])
        #expect(d.status == 65 && d.stderr.contains("16000x16000 pixels, over the limit"), "\(d.stderr)")
    }

    /// The same photo gave a smile as single_face.jpg and none as a copy without the extension: the copy was
    /// played as a one-frame video, with the video's calibration. A photo is now a still whatever its name.
    @Test func aPhotoIsAStillWhateverItsName() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let photo = Binaries.fixture("images/expressions/single_face.jpg")
        let reference = try Binaries.run("winkctl", ["analyze", photo, "--quiet"])
        #expect(reference.stdout.contains("\"event\":\"smile\""))
        for name in ["copy", "copy.mp4", "copy.bin"] {
            let copy = dir.appendingPathComponent(name).path
            try FileManager.default.copyItem(atPath: photo, toPath: copy)
            let r = try Binaries.run("winkctl", ["analyze", copy, "--quiet"])
            #expect(r.status == 0 && r.stdout.contains("\"event\":\"smile\""), "\(name): \(r.stdout)")
        }
        // The other way round: a video named .jpg, and a TGA (FFmpeg reads it, OpenCV does not) are read by
        // FFmpeg (both were refused as "not an image OpenCV can decode").
        let video = dir.appendingPathComponent("clip.jpg").path
        try FileManager.default.copyItem(atPath: Binaries.fixture("video/single_face.mp4"), toPath: video)
        let v = try Binaries.run("winkctl", ["analyze", video, "--quiet"])
        #expect(v.status == 0 && v.stdout.contains("\"event\":\"blink\""), "\(v.stderr)")
        let tga = dir.appendingPathComponent("grey.tga")
        // An uncompressed 24-bit TGA of 4x4 grey pixels: an 18-byte header, then the pixels.
        var bytes: [UInt8] = [0, 0, 2] + [UInt8](repeating: 0, count: 9) + [4, 0, 4, 0, 24, 0]
        bytes += [UInt8](repeating: 128, count: 4 * 4 * 3)
        try Data(bytes).write(to: tga)
        let t = try Binaries.run("winkctl", ["analyze", tga.path])
        #expect(t.status == 0 && t.stderr.contains("1 frame"), "\(t.stderr)")
    }

    /// A one-frame GIF or video of a smiling photo gave no smile: it was played as a video of one frame,
    /// too short for the smile row's 0.15 s. A file of one picture is now judged as the photo is; two
    /// frames of it are still a (very short) video. Here the photo as a one-frame YUV4MPEG2 stream (grey).
    @Test func aOneFrameVideoIsJudgedAsAPhoto() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let photo = Binaries.fixture("images/expressions/single_face.jpg")
        let still = try StillImageSource(path: photo)
        let buffer = PixelBuffer()
        _ = try still.read(into: buffer)
        let grey = Data(UnsafeBufferPointer(start: buffer.gray, count: buffer.width * buffer.height))
        let header = Data("YUV4MPEG2 W\(buffer.width) H\(buffer.height) F30:1 Ip A1:1 Cmono\n".utf8)
        let frame = Data("FRAME\n".utf8) + grey
        let one = dir.appendingPathComponent("one.y4m").path
        try (header + frame).write(to: URL(fileURLWithPath: one))
        let r = try Binaries.run("winkctl", ["analyze", one])
        #expect(r.status == 0 && r.stdout.contains("\"event\":\"smile\""), "\(r.stdout) \(r.stderr)")
        #expect(try VideoFileSource(path: one).isStill)
        let two = dir.appendingPathComponent("two.y4m").path
        try (header + frame + frame).write(to: URL(fileURLWithPath: two))
        #expect(try VideoFileSource(path: two).isStill == false)
        let t = try Binaries.run("winkctl", ["analyze", two, "--quiet"])
        #expect(t.status == 0 && !t.stdout.contains("\"event\":\"smile\""), "\(t.stdout)")
    }

    /// A misspelt name in `absent` switched that check off without a word, and a labels file saying 500
    /// frames for a 72-frame clip was scored as if right. evaluate now says both, one line each.
    @Test func evaluateSaysWhatItsLabelsCannotMean() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let labels = dir.appendingPathComponent("clip.labels.json").path
        try Data(
            """
            {"video": "\(Binaries.fixture("video/single_face.mp4"))", "frames": 500, "face": [[0, 71]],
             "absent": ["blnk", "winkLeft"]}
            """.utf8
        ).write(to: URL(fileURLWithPath: labels))
        let r = try Binaries.run("winkctl", ["evaluate", labels, "--quiet"])
        #expect(r.status == 0)
        #expect(
            r.stderrLines == [
                "evaluate: \(labels): no row of the analyzer table emits 'blnk' (a misspelt name?)",
                "evaluate: \(labels): the labels say 500 frames; the video gave 72",
            ], "\(r.stderr)")
    }

    /// `calibrate` on a picture of several people quietly made a profile of the largest face. It says so.
    @Test func calibrateSaysWhenSeveralFacesWereInView() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let profile = dir.appendingPathComponent("p.json").path
        let group = Binaries.fixture("images/expressions/multi_face.jpg")
        let r = try Binaries.run(
            "winkctl", ["calibrate", "--source", group, "-o", profile, "--segments", "neutral=0-1"])
        #expect(r.status == 0)
        let warning = r.stderrLines.filter { $0.contains("faces were in view at once") }
        #expect(warning.count == 1 && warning.first?.hasPrefix("calibrate: \(group): ") == true, "\(r.stderr)")
        let alone = try Binaries.run(
            "winkctl", ["calibrate", "--source", Binaries.fixture("images/expressions/single_face.jpg"), "-o",
                        profile, "--segments", "neutral=0-1"])
        #expect(alone.status == 0 && !alone.stderr.contains("faces were in view"), "\(alone.stderr)")
    }

    @Test func subcommandHelpPrintsItsUsage() throws {
        let r = try Binaries.run("winkctl", ["evaluate", "--help"])
        #expect(r.status == 0 && r.stdout.hasPrefix("usage: winkctl evaluate"))
    }
}

/// The fuzz targets' replay drivers (a normal build's `FuzzClientLine` / `FuzzConfiguration`) run their
/// corpora through the fuzzed function: what the fuzzers found stays fixed.
struct FuzzReplayTests {
    @Test(arguments: [("FuzzClientLine", "ClientLine"), ("FuzzConfiguration", "Configuration")])
    func theCorpusReplaysCleanly(driver: String, corpus: String) throws {
        let directory = Binaries.repository.appendingPathComponent("Tests/Fuzz/\(corpus)").path
        let inputs = try FileManager.default.contentsOfDirectory(atPath: directory).count
        let r = try Binaries.run(driver, [directory])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdoutLines == ["\(driver): replayed \(inputs) input(s)"])
        let missing = try Binaries.run(driver, ["/nonexistent/input"])
        #expect(missing.status == 66 && missing.stderrLines == ["\(driver): cannot read /nonexistent/input"])
    }

    /// Segments swapped by mistake (the "neutral" is the smile): calibrate said the smile's change of -0.233
    /// "is too small" and wrote a profile that lost smiles (the people set's smile recall 0.64 with it). It
    /// says the change goes the wrong way, in the summary and in one line on stderr; exit 0 (the profile is
    /// still written: its other spans stand).
    @Test func segmentsSwappedAreSaidToGoTheWrongWay() throws {
        let dir = try Binaries.temporaryDirectory()
        let video = Binaries.fixture("video/single_face.mp4")
        let swapped = try Binaries.run("winkctl", [
            "calibrate", "--source", video, "-o", dir.appendingPathComponent("s.json").path,
            "--segments", "neutral=1.0-2.0,smile=0-0.6",
        ])
        #expect(swapped.status == 0, "\(swapped.stderr)")
        #expect(swapped.stdoutLines.contains {
            $0.hasPrefix("mouthSmileRight  mouthWidth")
                && $0.hasSuffix("in smile goes the wrong way (are the segments right?)")
        }, "\(swapped.stdout)")
        #expect(swapped.stderrLines == [
            "calibrate: smile moved the face the other way from the neutral's (is --segments right? each step's "
                + "seconds must show that expression, neutral's a relaxed face); those spans keep the defaults",
        ])
        let right = try Binaries.run("winkctl", [
            "calibrate", "--source", video, "-o", dir.appendingPathComponent("r.json").path,
            "--segments", "neutral=0-0.6,smile=1.0-2.0",
        ])
        #expect(right.status == 0 && right.stderr.isEmpty, "\(right.stderr)")
        #expect(!right.stdout.contains("wrong way"), "\(right.stdout)")
    }
}
