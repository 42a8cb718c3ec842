import Foundation
import TestSupport
import Testing
import WinkCore

/// `winkd --source FILE --socket S` with `winkctl events --socket S` as a client: the real binaries.
@Suite(.serialized)
struct DaemonTests {
    /// Starts winkd on a recording; returns the process and its stderr pipe.
    func startDaemon(_ arguments: [String]) throws -> (Process, Pipe) {
        let p = Process()
        p.executableURL = Binaries.directory.appendingPathComponent("winkd")
        p.arguments = arguments
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        return (p, err)
    }

    func waitForSocket(_ path: String) throws {
        if !Wait.forFile(path) { Issue.record("winkd did not create \(path)") }
    }

    @Test func deliversTheEventsOfARecordingAfterHelloAndExitsAtItsEnd() throws {
        let dir = try Binaries.temporaryDirectory()
        let socket = dir.appendingPathComponent("events.sock").path
        let (daemon, _) = try startDaemon([
            "--source", Binaries.fixture("video/single_face.mp4"), "--socket", socket,
            "--pace", "fast",
        ])
        try waitForSocket(socket)
        let r = try Binaries.run("winkctl", ["events", "--socket", socket])
        daemon.waitUntilExit()
        #expect(daemon.terminationStatus == 0)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdoutLines
        let types = lines.compactMap { line -> String? in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["type"] as? String
        }
        #expect(types.first == "hello")
        #expect(types.last == "bye")
        #expect(lines.last?.contains("end_of_input") == true)
        let events = lines.filter { $0.contains("\"type\":\"event\"") }
            .compactMap { try? JSONDecoder().decode(ExpressionEvent.self, from: Data($0.utf8)) }
        #expect(events.filter(\.isOccurrence).map(\.event) == ["faceFound", "smile", "blink"])
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket file is removed at exit")
    }

    /// A newcomer's finding: at the end of noface_face.mov, whose face leaves in its last frame, winkd said
    /// `bye` after `smile began` where `winkctl analyze` ends the smile and loses the face: the daemon now
    /// sends the same lines as analyze, to the last.
    @Test func theLastLinesOfARecordingAreAnalyzesToo() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = dir.appendingPathComponent("events.sock").path
        let clip = Binaries.fixture("video/noface_face.mov")
        let (daemon, _) = try startDaemon(["--source", clip, "--socket", socket, "--pace", "fast"])
        try waitForSocket(socket)
        let r = try Binaries.run("winkctl", ["events", "--socket", socket, "--count", "100"])
        daemon.waitUntilExit()
        // Fewer events than --count asked for before bye: still 0, with a line saying so.
        #expect(r.status == 0 && r.stderrLines.count == 1, "\(r.stderr)")
        #expect(r.stderrLines.first?.hasPrefix("winkctl: events: winkd said bye after ") == true)
        #expect(r.stderrLines.first?.hasSuffix(" of the 100 events asked for") == true)
        let a = try Binaries.run("winkctl", ["analyze", clip, "--quiet"])
        func summary(_ lines: [String]) -> [String] {
            lines.compactMap { try? JSONDecoder().decode(ExpressionEvent.self, from: Data($0.utf8)) }
                .map { "\($0.event)\($0.phase.map { ":" + $0.rawValue } ?? "")@\($0.frame)" }
        }
        let analyzed = summary(a.stdoutLines)
        #expect(analyzed.suffix(2) == ["smile:ended@168", "faceLost@168"], "\(analyzed)")
        #expect(summary(r.stdoutLines.filter { $0.contains("\"type\":\"event\"") }) == analyzed)
        #expect(r.stdoutLines.last?.contains("end_of_input") == true)
    }

    /// A newcomer's finding: `winkctl status` on a winkd serving a 2.4 s recording started it with nobody
    /// listening; it played out within the 3 s linger and winkd exited, so the `events` that followed found
    /// no daemon (3 runs of 3). A status question starts nothing now.
    @Test func aStatusQuestionStartsNoSource() throws {
        let dir = try Binaries.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = dir.appendingPathComponent("events.sock").path
        let (daemon, _) = try startDaemon([
            "--source", Binaries.fixture("video/single_face.mp4"), "--socket", socket, "--pace", "fast",
        ])
        defer {
            if daemon.isRunning { daemon.terminate() }
            daemon.waitUntilExit()
        }
        try waitForSocket(socket)
        let status = try Binaries.run("winkctl", ["status", "--socket", socket, "--json"])
        #expect(status.status == 0 && status.stdout.contains("\"state\":\"idle\""), "\(status.stdout)")
        usleep(1_000_000)
        #expect(daemon.isRunning, "winkd played the recording for the status question and exited")
        let again = try Binaries.run("winkctl", ["status", "--socket", socket, "--json"])
        #expect(again.stdout.contains("\"state\":\"idle\""), "\(again.stdout)")
        let r = try Binaries.run("winkctl", ["events", "--socket", socket, "--count", "1"])
        #expect(r.status == 0 && r.stdout.contains("faceFound"), "\(r.stderr)")
    }

    /// Issue 5 (peak RSS): OpenCV's file codecs drag in ~240 libraries (GDAL, poppler, GStreamer...);
    /// winkd serving a recording must map none of them, only FFmpeg's decoders.
    @Test func servingARecordingLoadsNoImageCodecLibraries() throws {
        let dir = try Binaries.temporaryDirectory()
        let socket = dir.appendingPathComponent("events.sock").path
        let (daemon, _) = try startDaemon([
            "--source", Binaries.fixture("video/single_face.mp4"), "--socket", socket,
            "--pace", "realtime", "--loop",
        ])
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        try waitForSocket(socket)
        let client = try Binaries.run("winkctl", ["events", "--socket", socket, "--count", "2"])
        #expect(client.status == 0, "\(client.stderr)")
        // /proc files report size 0: read to the end rather than by the file's size.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/\(daemon.processIdentifier)/maps"))
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        #expect(maps.contains("libavcodec"), "recordings are decoded with FFmpeg")
        for library in ["libopencv_imgcodecs", "libopencv_videoio", "libgdal", "libWinkCodecs"] {
            #expect(!maps.contains(library), "winkd mapped \(library)")
        }
    }

    /// Clients are greeted before the model loads; when it then fails (here a model cut off at 90 MB,
    /// which passes the quick header check), each connected client is told `bye` with the reason and
    /// winkd exits 78 with one line naming the file.
    @Test func aModelThatFailsAfterTheGreetingSaysByeToClients() throws {
        let dir = try Binaries.temporaryDirectory()
        let model = dir.appendingPathComponent("truncated.dat")
        let whole = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/dlib/shape_predictor_68_face_landmarks.dat"))
        try whole.prefix(90_000_000).write(to: model)
        let socket = dir.appendingPathComponent("events.sock").path
        let p = Process()
        p.executableURL = Binaries.directory.appendingPathComponent("winkd")
        p.arguments = [
            "--source", Binaries.fixture("video/single_face.mp4"), "--socket", socket, "--model", model.path,
        ]
        p.environment = ProcessInfo.processInfo.environment.merging(["XDG_CACHE_HOME": dir.path]) { $1 }
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        try waitForSocket(socket)
        let r = try Binaries.run("winkctl", ["events", "--socket", socket])
        p.waitUntilExit()
        #expect(p.terminationStatus == 78)
        let types = r.stdoutLines.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["type"] as? String
        }
        #expect(types == ["hello", "bye"], "\(r.stdout)")
        #expect(r.stdoutLines.last?.contains("startup_failed") == true)
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(message.split(separator: "\n").count == 1, "\(message)")
        #expect(message.contains(model.path) && message.contains("truncated"), "\(message)")
    }

    @Test func subscribedClientGetsOnlyItsEvents() throws {
        let dir = try Binaries.temporaryDirectory()
        let socket = dir.appendingPathComponent("events.sock").path
        let (daemon, _) = try startDaemon([
            "--source", Binaries.fixture("video/single_face_wink_left.mp4"),
            "--socket", socket,
        ])
        try waitForSocket(socket)
        let r = try Binaries.run("winkctl", ["events", "--socket", socket, "--events", "winkLeft,winkRight"])
        daemon.waitUntilExit()
        let events = r.stdoutLines.filter { $0.contains("\"type\":\"event\"") }
        #expect(events.count == 2, "\(r.stdout)")  // winkLeft began and ended
        #expect(events.allSatisfy { $0.contains("winkLeft") })
    }

    @Test func aSecondDaemonOnALiveSocketIsRefused() throws {
        let dir = try Binaries.temporaryDirectory()
        let socket = dir.appendingPathComponent("events.sock").path
        let (first, _) = try startDaemon(["--source", Binaries.fixture("video/single_face.mp4"), "--socket", socket])
        try waitForSocket(socket)
        let second = try Binaries.run(
            "winkd", ["--source", Binaries.fixture("video/single_face.mp4"), "--socket", socket])
        #expect(second.status == 69)
        #expect(second.stderrLines.last?.contains(socket) == true, "\(second.stderr)")
        first.terminate()
        first.waitUntilExit()
        #expect(first.terminationStatus == 0)
        // Killed without cleanup: the stale file is replaced by the next start.
        let (third, _) = try startDaemon(["--source", Binaries.fixture("video/single_face.mp4"), "--socket", socket])
        try waitForSocket(socket)
        usleep(300_000)
        kill(third.processIdentifier, SIGKILL)
        third.waitUntilExit()
        #expect(FileManager.default.fileExists(atPath: socket))
        let (fourth, _) = try startDaemon([
            "--source", Binaries.fixture("video/single_face.mp4"), "--socket", socket,
            "--pace", "fast",
        ])
        // The stale file is there until the new daemon replaces it.
        var r = try Binaries.run("winkctl", ["events", "--socket", socket, "--count", "1"])
        try Wait.until(interval: 0.1) {
            if r.status != 0 { r = try Binaries.run("winkctl", ["events", "--socket", socket, "--count", "1"]) }
            return r.status == 0
        }
        #expect(r.status == 0 && r.stdout.contains("faceFound"), "\(r.stdout) \(r.stderr)")
        fourth.terminate()
        fourth.waitUntilExit()
    }

    @Test func badModelAndMissingFileExitBeforeServing() throws {
        let dir = try Binaries.temporaryDirectory()
        let socket = dir.appendingPathComponent("events.sock").path
        let m = try Binaries.run(
            "winkd",
            [
                "--source", Binaries.fixture("video/single_face.mp4"), "--socket", socket,
                "--model", "/nonexistent.dat",
            ])
        #expect(m.status == 78 && m.stderrLines.count == 1)
        let f = try Binaries.run("winkd", ["--source", "/nonexistent.mp4", "--socket", socket])
        #expect(f.status == 66 && f.stderrLines.count == 1)
        #expect(!FileManager.default.fileExists(atPath: socket))
    }
}
