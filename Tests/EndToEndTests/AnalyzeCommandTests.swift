import Foundation
import TestSupport
import Testing
import WinkCore

/// `winkctl analyze` as a user runs it: exit codes and one-line messages for bad input.
@Suite(.serialized)
struct AnalyzeCommandTests {
    @Test func printsTheLabelledEventsForSingleFace() throws {
        let r = try Binaries.run("winkctl", ["analyze", Binaries.fixture("video/single_face.mp4")])
        #expect(r.status == 0, "\(r.stderr)")
        let events = try r.stdoutLines.map { try JSONDecoder().decode(ExpressionEvent.self, from: Data($0.utf8)) }
        let occurrences = events.filter(\.isOccurrence).map { "\($0.event)@\($0.frame)" }
        #expect(occurrences.count == 3, "\(occurrences)")
        #expect(events.first?.event == "faceFound" && events.first?.frame == 0)
        let blink = try #require(events.first { $0.event == "blink" })
        #expect((22...32).contains(blink.frame) && blink.phase == .occurred && blink.duration != nil)
        let smile = try #require(events.first { $0.event == "smile" && $0.phase == .began })
        #expect((16...71).contains(smile.frame))
    }

    @Test func missingFileExits66WithOneLine() throws {
        let r = try Binaries.run("winkctl", ["analyze", "/nonexistent/clip.mp4"])
        #expect(r.status == 66)
        #expect(r.stderrLines == ["winkctl: /nonexistent/clip.mp4: no such file"])
    }

    @Test func textFileAsVideoExits65() throws {
        let dir = try Binaries.temporaryDirectory()
        let file = dir.appendingPathComponent("notes.mp4")
        try Data("this is not a video\n".utf8).write(to: file)
        let r = try Binaries.run("winkctl", ["analyze", file.path])
        #expect(r.status == 65)
        #expect(r.stderrLines.count == 1 && r.stderr.contains(file.path), "\(r.stderr)")
        let empty = dir.appendingPathComponent("empty.mov")
        try Data().write(to: empty)
        let e = try Binaries.run("winkctl", ["analyze", empty.path])
        #expect(e.status == 65 && e.stderrLines.count == 1)
        let directory = try Binaries.run("winkctl", ["analyze", dir.path])
        #expect(directory.status == 66 && directory.stderrLines.count == 1)
    }

    /// Stills go through OpenCV's imread in the WinkCodecs plugin, loaded on first use; recordings do not.
    @Test func aMissingCodecPluginIsNamedAndOnlyStillsNeedIt() throws {
        let environment = ["WINK_CODECS_PLUGIN": "/nonexistent/libWinkCodecs.so"]
        let photo = Binaries.fixture("images/dogs.jpg")
        let still = try Binaries.run("winkctl", ["analyze", photo], environment: environment)
        #expect(still.status == 70)
        #expect(
            still.stderrLines == [
                "winkctl: \(photo): OpenCV codec plugin not loaded: /nonexistent/libWinkCodecs.so missing"
            ])
        let video = try Binaries.run(
            "winkctl", ["analyze", Binaries.fixture("video/single_face.mp4")],
            environment: environment)
        #expect(video.status == 0, "\(video.stderr)")
        // --plot writes through the plugin too: the same exit 70 (it used to be 69, "cannot write").
        let plot = try Binaries.temporaryDirectory().appendingPathComponent("p.png").path
        let plotted = try Binaries.run(
            "winkctl", ["analyze", Binaries.fixture("video/single_face.mp4"), "--plot", plot],
            environment: environment)
        #expect(plotted.status == 70 && plotted.stderr.contains("OpenCV codec plugin not loaded"), "\(plotted.stderr)")
        let found = try Binaries.run("winkctl", ["analyze", photo])
        #expect(found.status == 0, "the plugin beside winkctl is found: \(found.stderr)")
    }

    @Test func usageErrorsExit64() throws {
        #expect(try Binaries.run("winkctl", ["analyze"]).status == 64)
        #expect(try Binaries.run("winkctl", ["analyze", "x.mp4", "--frobnicate"]).status == 64)
        #expect(try Binaries.run("winkctl", ["nonsense"]).status == 64)
    }
}

/// The model file is checked before any frame is read; every problem is exit 78 and one line.
@Suite(.serialized)
struct ModelFileTests {
    func analyse(model: String) throws -> Binaries.Result {
        try Binaries.run("winkctl", ["analyze", Binaries.fixture("images/dogs.jpg"), "--model", model])
    }

    @Test func missingModel() throws {
        let r = try analyse(model: "/nonexistent/shape_predictor_68_face_landmarks.dat")
        #expect(r.status == 78)
        #expect(
            r.stderrLines == ["winkctl: /nonexistent/shape_predictor_68_face_landmarks.dat: model file does not exist"])
    }

    @Test func directoryTextAndCompressedModels() throws {
        let dir = try Binaries.temporaryDirectory()
        let d = try analyse(model: dir.path)
        #expect(d.status == 78 && d.stderrLines.count == 1 && d.stderr.contains("directory"))
        let text = dir.appendingPathComponent("model.dat")
        try Data("not a model at all, just some text\n".utf8).write(to: text)
        let t = try analyse(model: text.path)
        #expect(
            t.status == 78 && t.stderrLines.count == 1 && t.stderr.contains("not a dlib shape predictor"), "\(t.stderr)"
        )
        let bz2 = dir.appendingPathComponent("shape_predictor_68_face_landmarks.dat.bz2")
        try Data([0x42, 0x5A, 0x68, 0x39, 0x31, 0x41, 0x59, 0x26, 0x53, 0x59]).write(to: bz2)
        let b = try analyse(model: bz2.path)
        #expect(b.status == 78 && b.stderrLines.count == 1 && b.stderr.contains("bzip2"), "\(b.stderr)")
        let empty = dir.appendingPathComponent("empty.dat")
        try Data().write(to: empty)
        #expect(try analyse(model: empty.path).status == 78)
    }

    @Test func fivePointModelIsTheWrongModel() throws {
        // A serialised dlib shape_predictor with 5 parts and no trees, written byte by byte in dlib's
        // serialisation format (dlib/serialize.h pack_int; matrix dims negated; float = mantissa, exponent).
        var bytes: [UInt8] = [0x01, 0x01]  // version 1
        bytes += [0x81, 0x0A, 0x81, 0x01]  // initial_shape: -10 rows, -1 column
        for _ in 0..<10 { bytes += [0x01, 0x00, 0x01, 0x00] }  // ten 0.0 floats
        bytes += [0x01, 0x00, 0x01, 0x00, 0x01, 0x00]  // forests, anchor_idx, deltas: empty vectors
        let file = try Binaries.temporaryDirectory().appendingPathComponent("shape_predictor_5_face_landmarks.dat")
        try Data(bytes).write(to: file)
        let r = try analyse(model: file.path)
        #expect(r.status == 78)
        #expect(
            r.stderrLines.count == 1 && r.stderr.contains("5 landmarks") && r.stderr.contains("68-point"), "\(r.stderr)"
        )
    }
}

/// Issue 15 item 7: a coefficient line's `values` hold ARKit coefficients only, each in 0...1; the head
/// pose has its own field, in degrees.
@Suite struct CoefficientLineShapeTests {
    static let arkitNames: Set<String> = [
        "eyeBlinkLeft", "eyeBlinkRight", "eyeSquintLeft", "eyeSquintRight", "eyeWideLeft", "eyeWideRight",
        "jawOpen", "mouthSmileLeft", "mouthSmileRight", "mouthFunnel", "mouthPucker", "mouthClose",
        "browInnerUp", "browDownLeft", "browDownRight", "browOuterUpLeft", "browOuterUpRight",
        "cheekSquintLeft", "cheekSquintRight", "mouthFrownLeft", "mouthFrownRight", "mouthLeft", "mouthRight",
        "mouthPressLeft", "mouthPressRight", "mouthStretchLeft", "mouthStretchRight", "noseSneerLeft",
        "noseSneerRight", "mouthDimpleLeft", "mouthDimpleRight", "mouthRollLower", "mouthRollUpper",
        "mouthShrugLower", "mouthShrugUpper", "mouthUpperUpLeft", "mouthUpperUpRight", "mouthLowerDownLeft",
        "mouthLowerDownRight", "cheekPuff", "jawForward", "jawLeft", "jawRight", "eyeLookUpLeft", "eyeLookUpRight",
        "eyeLookDownLeft", "eyeLookDownRight", "eyeLookInLeft", "eyeLookInRight", "eyeLookOutLeft",
        "eyeLookOutRight", "tongueOut",
    ]

    @Test func valuesAreCoefficientsAndThePoseIsItsOwnField() throws {
        let r = try Binaries.run("winkctl", ["analyze", Binaries.fixture("video/single_face_wink_left.mp4"),
                                             "--coefficients", "--quiet"])
        #expect(r.status == 0)
        let lines = try r.stdoutLines.compactMap { line -> [String: Any]? in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["type"] as? String == "coefficients" ? object : nil
        }
        #expect(lines.count == 80)
        for line in lines {
            let values = try #require(line["values"] as? [String: Double])
            #expect(!values.isEmpty && values.keys.allSatisfy(Self.arkitNames.contains), "\(values.keys.sorted())")
            #expect(values.values.allSatisfy { (0...1).contains($0) })
            let pose = try #require(line["headPose"] as? [String: Double])
            #expect(Set(pose.keys) == ["yaw", "pitch", "roll"] && pose.values.allSatisfy { abs($0) <= 180 })
        }
    }

    /// Ctrl-C on `winkctl analyze clip > events.ndjson` lost every line already analysed (0 lines, exit 130,
    /// after 450 of 720 frames): they waited in a 64 KiB buffer, which is also how they reached a pipe, in
    /// bursts. Lines now go out within `LineWriter.flushInterval`, and a stop writes what is left after the
    /// frame under way, says so and exits 128 + the signal.
    @Test func aStopKeepsTheLinesOfTheFramesAnalysed() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = dir.appendingPathComponent("events.ndjson")
        let errors = dir.appendingPathComponent("stderr.txt")
        try #require(FileManager.default.createFile(atPath: output.path, contents: nil))
        try #require(FileManager.default.createFile(atPath: errors.path, contents: nil))
        let p = Process()
        p.executableURL = Binaries.directory.appendingPathComponent("winkctl")
        // 20 s of video (600 frames), several seconds to analyse: the faceFound line of frame 0 must reach the
        // file long before the end.
        p.arguments = ["analyze", Binaries.fixture("people/video/liveportrait_d9.mp4"), "--quiet"]
        p.standardOutput = try FileHandle(forWritingTo: output)
        p.standardError = try FileHandle(forWritingTo: errors)
        try p.run()
        let printed = Wait.until { ((try? Data(contentsOf: output)) ?? Data()).contains(UInt8(ascii: "\n")) }
        kill(p.processIdentifier, SIGINT)
        #expect(Wait.forExit(p))
        #expect(printed, "no line reached the file while analyze ran")
        #expect(p.terminationStatus == 130)
        let said = try String(contentsOf: errors, encoding: .utf8)
        let head = "analyze: stopped by SIGINT after frame ", tail = "; the lines of the frames before were written\n"
        #expect(said.hasPrefix(head) && said.hasSuffix(tail), "\(said)")
        let lastFrame = try #require(Int(said.dropFirst(head.count).dropLast(tail.count)), "\(said)")
        #expect(lastFrame < 599, "the run had ended before the signal: \(said)")
        let lines = try String(contentsOf: output, encoding: .utf8).split(separator: "\n")
        let events = try lines.map { try JSONDecoder().decode(ExpressionEvent.self, from: Data($0.utf8)) }
        #expect(events.first?.event == "faceFound" && events.first?.frame == 0, "\(lines)")
        #expect(events.allSatisfy { $0.frame <= lastFrame })
        // Every line the same recording gives up to that frame, no fewer.
        let whole = try Binaries.run("winkctl", ["analyze", Binaries.fixture("people/video/liveportrait_d9.mp4")])
        let expected = try whole.stdoutLines.map { try JSONDecoder().decode(ExpressionEvent.self, from: Data($0.utf8)) }
        #expect(events.map(\.frame) == expected.filter { $0.frame <= lastFrame }.map(\.frame))
    }

    /// A newcomer's finding: a photo cut short, or a PNG whose checksum fails, was analysed (and overlaid) with
    /// exit 0 and no word of winkctl's own, only libjpeg's "Premature end of JPEG file" or libpng's "IDAT: CRC
    /// error". The file is now said to be damaged in one line, as a damaged recording is, and what decoded
    /// is still used.
    @Test func aDamagedPhotoIsSaidToBeSo() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cut = try Binaries.truncatedFixture("images/expressions/single_face.jpg", in: dir, as: "cut.jpg")
        // A whole PNG of 8x8 grey pixels, then the same with its IDAT checksum broken, and without its IEND.
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in body {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
            }
            return bigEndian(UInt32(data.count)) + body + bigEndian(crc ^ 0xFFFF_FFFF)
        }
        func bigEndian(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * $0)) } }
        // Stored (uncompressed) deflate blocks in a zlib stream: 8 rows of a filter byte and 8 grey pixels.
        let rows = [UInt8]((0..<8).flatMap { _ in [0] + [UInt8](repeating: 128, count: 8) })
        var adler = (a: UInt32(1), b: UInt32(0))
        for byte in rows { adler.a = (adler.a + UInt32(byte)) % 65521; adler.b = (adler.b + adler.a) % 65521 }
        let zlib: [UInt8] = [0x78, 0x01, 0x01, UInt8(rows.count), 0, ~UInt8(rows.count), 0xFF] + rows
            + bigEndian(adler.b << 16 | adler.a)
        let header = chunk("IHDR", bigEndian(8) + bigEndian(8) + [8, 0, 0, 0, 0])
        let whole = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + header + chunk("IDAT", zlib) + chunk("IEND", [])
        var broken = whole
        broken[8 + header.count + 8 + zlib.count] ^= 0xFF  // the IDAT chunk's CRC
        let files = [("whole.png", whole), ("crc.png", broken), ("short.png", Array(whole.dropLast(12)))]
        for (name, bytes) in files {
            try Data(bytes).write(to: dir.appendingPathComponent(name))
        }
        for (file, said) in [
            (cut, "truncated JPEG (it ends before its end-of-image marker)"),
            (dir.appendingPathComponent("crc.png").path, "corrupt PNG (CRC mismatch in chunk IDAT)"),
            (dir.appendingPathComponent("short.png").path, "truncated PNG (it ends before its IEND chunk)"),
        ] {
            let r = try Binaries.run("winkctl", ["analyze", file, "--quiet"])
            #expect(r.status == 0, "\(r.stderr)")
            let ours = r.stderrLines.filter { $0.hasPrefix("analyze: ") }
            #expect(ours.count == 1 && ours.first?.hasPrefix("analyze: \(file): \(said)") == true, "\(r.stderr)")
        }
        let fine = try Binaries.run("winkctl", ["analyze", dir.appendingPathComponent("whole.png").path, "--quiet"])
        #expect(fine.status == 0 && fine.stderr.isEmpty, "\(fine.stderr)")
        let face = try Binaries.run("winkctl", ["analyze", Binaries.fixture("images/expressions/single_face.jpg")])
        #expect(face.status == 0 && face.stderrLines.count == 1, "only the summary: \(face.stderr)")
    }
}
