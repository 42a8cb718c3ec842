import CaptureTestSupport
import EventServer
import Expressions
import Foundation
import TestSupport
import Testing

@testable import WinkDaemon

/// Issue 16: the daemon describes its analyzer table to clients that subscribe with `"analyzers":true`, and
/// describes it again when a SIGHUP reload puts a new one in use.
@Suite(.serialized)
struct AnalyzersLineTests {
    @Test func theTableIsSentOnSubscribeAndAgainAfterAReload() throws {
        let dir = try Scratch.directory("winkd-rows")
        let config = dir.appendingPathComponent("winkd.json")
        try Data(#"{"analyzers": [{"event": "smile", "value": "mouthSmileLeft", "enter": 0.6, "exit": 0.4}]}"#.utf8)
            .write(to: config)
        var options = DaemonOptions(
            source: "/dev/video7", socketPath: dir.appendingPathComponent("s.sock").path,
            configuration: try Configuration.load(path: config.path))
        options.alwaysOn = true
        let daemon = try Daemon(
            options: options, predictor: DaemonHarness.predictor,
            environment: DaemonHarness.environment(FakeV4L2Device(picture: DaemonHarness.face)),
            observer: Recorder()
        ) { _, _ in }
        defer { daemon.shutdown(reason: "shutdown") }
        let client = try EventClient(path: options.socketPath)
        try client.send(line: #"{"type":"subscribe","id":1,"events":[],"analyzers":true}"#)
        func nextTable() throws -> AnalyzersLine<AnalyzerRow>? {
            while let line = try client.nextLine(timeout: 10) {
                if EventClient.type(of: line) == "analyzers" {
                    return try JSONDecoder().decode(AnalyzersLine<AnalyzerRow>.self, from: Data(line.utf8))
                }
            }
            return nil
        }
        let first = try #require(try nextTable())
        // The file's row replaces the default smile row; the other default rows stay.
        #expect(first.version == 1 && first.rows.map(\.event) == options.configuration.analyzers.map(\.event))
        #expect(first.rows.first { $0.event == "smile" }?.enter == 0.6)

        try Data(#"{"analyzers": [{"event": "smile", "value": "mouthSmileLeft", "enter": 0.7, "exit": 0.4}]}"#.utf8)
            .write(to: config)
        #expect(daemon.reload())
        let second = try #require(try nextTable())
        #expect(second.rows.first { $0.event == "smile" }?.enter == 0.7)
    }
}
