import CaptureTestSupport
import EventServer
import Expressions
import Foundation
import TestSupport
import Testing
import WinkCore

@testable import WinkDaemon

/// Issue 13, fault 10: limits the contract states (SPEC.md: a line is at most 8 KiB; names must pass
/// through `--events a,b` and input-map chords) are kept by the configuration check.
struct EventNameLimitTests {
    func parse(_ json: String) throws -> Configuration { try Configuration.parse(Data(json.utf8), path: "c.json") }

    /// The problem lines of a configuration that must be refused.
    func problems(_ json: String) -> [String] {
        do {
            _ = try parse(json)
            Issue.record("expected Configuration.Invalid")
            return []
        } catch let e as Configuration.Invalid {
            #expect(e.exitCode == .configuration)
            return e.description.split(separator: "\n").map(String.init)
        } catch {
            Issue.record("wrong error \(error)")
            return []
        }
    }

    /// 400 rows with 39-character names: the configuration that gave a 16,945-byte `hello`.
    static func fourHundredRows() -> String {
        let rows = (0..<400).map { i in
            #"{"event": "\#(String(format: "customExpression%03d", i) + String(repeating: "x", count: 20))", "value": "#
            + #""jawOpen", "enter": 0.5}"#
        }
        return #"{"analyzers": [\#(rows.joined(separator: ","))]}"#
    }

    /// A 70-character name was cut at 64 in the table's problems but given whole in its decoding problems:
    /// one row, two spellings (helper-32). Every problem shows it cut the same way.
    @Test func aLongNameIsShownOneWayInEveryProblem() {
        let name = String(repeating: "e", count: 70)
        let lines = problems(#"{"analyzers": [{"event": "\#(name)", "value": "jawOpen", "enter": 2}, "#
                             + #"{"event": "\#(name)", "enter": 0.5}]}"#)
        let shown = "analyzers[0] (" + String(repeating: "e", count: 64) + "...)"
        #expect(lines.contains { $0.hasPrefix("c.json: \(shown).enter: expected a number in 0...1") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("c.json: analyzers[1] (" + String(repeating: "e", count: 64) + "...)") },
                "\(lines)")
        #expect(!lines.contains { $0.contains(name) }, "\(lines)")
    }

    @Test func aNameWithACommaIsRefusedInOneLineNamingTheRow() {
        let lines = problems(#"{"analyzers": [{"event": "a,b", "value": "jawOpen", "enter": 0.5}]}"#)
        #expect(lines.count == 1, "\(lines)")
        let line = lines.first ?? ""
        #expect(line.hasPrefix("c.json: analyzers[0] (a,b).event:") && line.contains("','"), "\(line)")
        #expect(line.contains("letters, digits, '_', '-' or '.'"), "the line says what is allowed: \(line)")
    }

    @Test func namesOutsideTheCharacterSetAreRefusedAndTheSetIsAccepted() throws {
        for bad in ["a+b", "a b", "1up", "_x", "smile!", "blïnk", "a\\nb", String(repeating: "a", count: 65)] {
            let lines = problems(#"{"analyzers": [{"event": "\#(bad)", "value": "jawOpen", "enter": 0.5}]}"#)
            #expect(lines.count == 1 && lines[0].contains("event: the name"), "\(bad): \(lines)")
            #expect(!lines.joined().contains("\n"))
        }
        let good = "brow.Raise_2-left" + String(repeating: "x", count: 64 - 17)
        let c = try parse(#"{"analyzers": [{"event": "\#(good)", "value": "jawOpen", "enter": 0.5}]}"#)
        #expect(c.analyzers.last?.event == good)
    }

    @Test func aTableWhoseHelloWouldPassEightKiBIsRefused() {
        // Before: accepted, and every client was greeted with a 16,945-byte hello line.
        let names =
            [EventName.faceFound, EventName.faceLost] + AnalyzerRow.defaultTable.map(\.event)
            + (0..<400).map { String(format: "customExpression%03d", $0) + String(repeating: "x", count: 20) }
        #expect(EventNameRules.helloLength(names) == 16_945)
        let lines = problems(Self.fourHundredRows())
        #expect(lines.count == 1, "\(lines.map { $0.prefix(200) })")
        let line = lines.first ?? ""
        #expect(
            line.hasPrefix("c.json: analyzers: the hello line announcing these 408 events would be 16945 bytes"),
            "\(line)")
        #expect(
            line.contains("8192-byte (8 KiB) line limit") && line.contains("use fewer rows or shorter names"), "\(line)"
        )
    }

    @Test func theLargestTableThatFitsIsAcceptedAndItsHelloIsWithinTheLimit() throws {
        // 8 default names, faceFound, faceLost; 64-character names fill the rest.
        var count = 0
        while true {
            let names =
                [EventName.faceFound, EventName.faceLost] + AnalyzerRow.defaultTable.map(\.event)
                + (0...count).map { Self.longName($0) }
            if EventNameRules.helloLength(names) > EventNameRules.helloLimit { break }
            count += 1
        }
        let rows = (0..<count).map { #"{"event": "\#(Self.longName($0))", "value": "jawOpen", "enter": 0.5}"# }
        let c = try parse(#"{"analyzers": [\#(rows.joined(separator: ","))]}"#)
        #expect(count >= 100, "about 120 rows of 64-character names fit (README)")
        let hello = try LineEncoder().line(HelloLine(events: Daemon.eventNames(c)))
        #expect(hello.count <= 8192 + 1)
        let more = (0...count).map { #"{"event": "\#(Self.longName($0))", "value": "jawOpen", "enter": 0.5}"# }
        #expect(problems(#"{"analyzers": [\#(more.joined(separator: ","))]}"#).count == 1)
    }

    static func longName(_ i: Int) -> String { String(format: "r%04d", i) + String(repeating: "n", count: 59) }

    @Test func theServerRefusesToAnnounceAHelloOverEightKiB() throws {
        let dir = try Scratch.directory("winkd-names")
        let path = dir.appendingPathComponent("s.sock").path
        let names = (0..<400).map { String(format: "customExpression%03d", $0) + String(repeating: "x", count: 20) }
        #expect(throws: EventServerError.self) { _ = try EventServer(path: path, eventNames: names) }
        #expect(!FileManager.default.fileExists(atPath: path), "no socket left behind")
        let server = try EventServer(path: path, eventNames: ["smile"])
        defer { server.stop() }
        do {
            try server.announce(eventNames: names)
            Issue.record("announce accepted a 16 KiB hello")
        } catch let error as EventServerError {
            #expect(error.exitCode == .configuration && error.description.contains("8 KiB"), "\(error)")
        }
        #expect(server.eventNames == ["smile"], "the old names stay")
    }

    @Test func aReloadWithABadNameIsRefusedAndHundredsOfProblemsStillFitTheStatusLine() throws {
        let dir = try Scratch.directory("winkd-names")
        let config = dir.appendingPathComponent("winkd.json")
        try Data(#"{"analyzers": [{"event": "smile", "enter": 0.6}]}"#.utf8).write(to: config)
        var options = DaemonOptions(
            source: "/dev/video7", socketPath: dir.appendingPathComponent("s.sock").path,
            configuration: try Configuration.load(path: config.path))
        options.alwaysOn = true
        let recorder = Recorder()
        let camera = FakeV4L2Device(picture: DaemonHarness.face)
        let daemon = try Daemon(
            options: options, predictor: DaemonHarness.predictor,
            environment: DaemonHarness.environment(camera), observer: recorder
        ) { _, _ in }
        defer { daemon.shutdown(reason: "shutdown") }

        try Data(#"{"analyzers": [{"event": "a,b", "value": "jawOpen", "enter": 0.5}]}"#.utf8).write(to: config)
        #expect(!daemon.reload())
        let failed = try #require(recorder.lines.last)
        #expect(failed.state == .reloadFailed, "\(failed)")
        #expect(failed.message?.contains("analyzers[0] (a,b).event:") == true, "\(failed)")
        #expect(daemon.server.eventNames.contains("smile") && !daemon.server.eventNames.contains("a,b"))

        try Data(Self.fourHundredRows().utf8).write(to: config)
        #expect(!daemon.reload())
        #expect(recorder.lines.last?.message?.contains("16945 bytes") == true)

        // 400 bad names: 400 problems; the status line keeps the first ones and says how many more.
        let rows = (0..<400).map { #"{"event": "bad,name\#($0)", "value": "jawOpen", "enter": 0.5}"# }
        try Data(#"{"analyzers": [\#(rows.joined(separator: ","))]}"#.utf8).write(to: config)
        #expect(!daemon.reload())
        let many = try #require(recorder.lines.last)
        #expect(many.state == .reloadFailed)
        #expect(many.message?.contains("more (the log has them all)") == true, "\(many.message?.suffix(80) ?? "")")
        #expect(try LineEncoder().line(many).count <= 8192, "the line is sent, not dropped as over 8 KiB")
    }
}
