import Foundation
import TestSupport
import Testing

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
}
