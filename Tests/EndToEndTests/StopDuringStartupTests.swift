import Foundation
import Glibc
import Testing
import TestSupport

/// Issue 13, fault 8: a SIGTERM while winkd loads the model (a cold cache: about 1 s) used to exit 0 at
/// once, without `bye` to the clients that had connected (they are greeted before the model loads) and
/// with the socket file left behind.
@Suite(.serialized)
struct StopDuringStartupTests {
    @Test func sigtermWhileTheModelLoadsSaysByeAndRemovesTheSocket() throws {
        var exercised = 0
        for attempt in 1...5 where exercised == 0 {
            let dir = try Binaries.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let socket = dir.appendingPathComponent("s.sock").path
            let cache = dir.appendingPathComponent("cache")  // empty: the model cache is cold
            try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
            let log = dir.appendingPathComponent("stderr.txt")
            try #require(FileManager.default.createFile(atPath: log.path, contents: nil))
            let p = Process()
            p.executableURL = Binaries.directory.appendingPathComponent("winkd")
            p.arguments = ["--source", Binaries.fixture("video/single_face.mp4"), "--socket", socket]
            var env = ProcessInfo.processInfo.environment
            env["XDG_CACHE_HOME"] = cache.path
            p.environment = env
            p.standardOutput = FileHandle.nullDevice
            p.standardError = try FileHandle(forWritingTo: log)
            try p.run()

            let client = try #require(Wait.value(interval: 0.005) { RawClient(path: socket) })
            let hello = client.read(until: { $0.contains { $0.contains("\"hello\"") } })
            #expect(hello.first?.contains("\"hello\"") == true, "\(hello)")
            kill(p.processIdentifier, SIGTERM)
            let rest = client.read(until: { $0.contains { $0.contains("\"bye\"") } })
            #expect(Wait.forExit(p))
            let stderr = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            // "listening on" is logged once start-up is over: then this attempt stopped a running daemon.
            if stderr.contains("listening on") { continue }
            exercised = attempt
            #expect(p.terminationStatus == 0, "\(stderr)")
            #expect(rest.contains(#"{"reason":"shutdown","type":"bye"}"#), "attempt \(attempt): \(rest)")
            #expect(!FileManager.default.fileExists(atPath: socket), "the socket file is removed")
        }
        #expect(exercised > 0, "every attempt finished loading the model before the SIGTERM came")
    }
}
