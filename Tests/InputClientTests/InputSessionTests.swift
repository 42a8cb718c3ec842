import EventServer
import Foundation
import TestSupport
import Testing
import WinkCore

@testable import InputClient

/// A one-client Unix socket server on a temporary path: greets, records the client's first line, writes
/// scripted lines, then closes. The socket is in a scratch folder; `deinit` closes and unlinks it once the
/// tests and the serving thread are done with the server.
final class FakeEventServer: @unchecked Sendable {
    let path: String
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)
    private(set) var received = ""

    init() throws {
        path = try Scratch.directory("winkin").appendingPathComponent("s.sock").path
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) {
            $0.copyBytes(from: bytes)
            $0[bytes.count] = 0
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0, listen(listener, 4) == 0 else { throw POSIXError(.EADDRINUSE) }
    }

    /// Serves one client in the background: hello, read one line, then `lines`. The thread holds the server
    /// only while it serves (the server does not hold the thread: they held each other, and every test's
    /// listening socket stayed open until the test process ended).
    func serve(hello: String, lines: [String]) {
        let thread = Thread { [self] in
            let client = accept(listener, nil, nil)
            write(client, hello + "\n")
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(client, &buffer, buffer.count)
            received = String(decoding: buffer[..<max(0, count)], as: UTF8.self)
            for line in lines { write(client, line + "\n") }
            close(client)
            done.signal()
        }
        thread.start()
    }

    func wait() { done.wait() }

    private func write(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    deinit {
        close(listener)
        unlink(path)
    }
}

/// A connector that plays scripted connections: nil fails to connect, otherwise lines then EOF.
final class ScriptedConnector: EventLineConnector {
    let path = "/scripted.sock"
    var script: [[LineRead]?]
    var connects = 0
    /// The connections made, in order (what each was sent).
    var made: [Connection] = []
    let clock: ManualClock

    init(_ script: [[LineRead]?], clock: ManualClock) {
        self.script = script
        self.clock = clock
    }

    func connect(helloTimeout: Double) throws -> EventLineConnection {
        connects += 1
        guard !script.isEmpty, let lines = script.removeFirst() else {
            throw EventServerError(.noDaemon, subject: path, reason: "no winkd listening")
        }
        let connection = Connection(lines, clock: clock)
        made.append(connection)
        return connection
    }

    final class Connection: EventLineConnection {
        var lines: [LineRead]
        let clock: ManualClock
        var sent: [String] = []
        init(_ lines: [LineRead], clock: ManualClock) {
            self.lines = lines
            self.clock = clock
        }
        func readLine(timeout: Double) throws -> LineRead {
            guard !lines.isEmpty else { return .closed }
            let next = lines.removeFirst()
            if next == .timeout { clock.advance(seconds: 0.1) }
            return next
        }
        func send(_ line: String) throws { sent.append(line) }
        func close() {}
    }
}

struct InputSessionTests {
    static let hello =
        #"{"type":"hello","protocol":"winkd","version":1,"#
        + #""events":["faceFound","faceLost","blink","winkLeft","winkRight","smile","mouthOpen"]}"#

    static func ndjson(_ event: ExpressionEvent) -> String { try! LineEncoder().string(event) }

    /// smile -> KEY_ENTER, blink -> KEY_B: a map with one event a daemon may stop offering.
    static func smileAndBlinkMap() throws -> InputMap {
        try InputMap.parse(
            Data(
                (#"{"mappings": [{"event": "smile", "action": {"key": "KEY_ENTER"}},"#
                    + #"{"event": "blink", "action": {"key": "KEY_B"}}]}"#).utf8))
    }

    @Test func dryRunEndToEndOverAUnixSocket() throws {
        let server = try FakeEventServer()
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Resources/single_face_wink_left.ndjson")
        let recorded = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map(String.init)
        server.serve(hello: Self.hello, lines: recorded + [#"{"type":"bye","reason":"end_of_input"}"#])

        let map = try InputMap.parse(
            Data(
                """
                {"mappings": [{"event": "winkLeft", "action": {"key": "KEY_LEFT"}},
                              {"event": "blink,blink", "action": {"key": "KEY_SPACE"}}]}
                """.utf8))
        let transcript = Transcript()
        var logs: [String] = []
        let session = InputSession(
            engine: MappingEngine(map: map, injector: PrintingInjector { transcript.append($0); return nil }),
            connector: UnixSocketConnector(path: server.path), sleep: { _ in }, log: { logs.append($0) })
        let end = session.run(reconnect: false)
        server.wait()

        #expect(end == .bye("end_of_input"))
        #expect(transcript.lines == ["press KEY_LEFT", "release KEY_LEFT"])
        struct Subscribe: Decodable, Equatable {
            var type: String
            var id: Int
            var events: [String]
            var coefficients: Bool
        }
        #expect(server.received.hasSuffix("\n") && server.received.filter { $0 == "\n" }.count == 1)
        #expect(
            try JSONDecoder().decode(Subscribe.self, from: Data(server.received.utf8))
                == Subscribe(
                    type: "subscribe", id: 1, events: ["blink", "faceFound", "faceLost", "winkLeft"],
                    coefficients: false))
        #expect(logs.isEmpty)
    }

    /// A map naming an event the daemon does not offer (a typo, or a row its configuration lacks) ends the
    /// session at once, even when reconnecting, without subscribing: nothing of it would ever fire.
    @Test func anEventTheDaemonDoesNotOfferEndsTheSession() throws {
        let server = try FakeEventServer()
        server.serve(hello: Self.hello, lines: [])  // the client leaves after the hello: nothing more to write
        let map = try InputMap.parse(
            Data(
                """
                {"mappings": [{"event": "winkleft", "action": {"key": "KEY_LEFT"}},
                              {"event": "smile", "action": {"key": "KEY_ENTER"}},
                              {"event": "fooBar", "action": {"key": "KEY_F"}}]}
                """.utf8))
        let session = InputSession(
            engine: MappingEngine(map: map, injector: PrintingInjector { _ in nil }),
            connector: UnixSocketConnector(path: server.path), sleep: { _ in }, log: { _ in })
        let end = session.run(reconnect: true)
        server.wait()
        #expect(
            end
                == .unknownEvents(
                    ["fooBar", "winkleft"],
                    offered: ["faceFound", "faceLost", "blink", "winkLeft", "winkRight", "smile", "mouthOpen"]))
        #expect(server.received.isEmpty)
    }

    @Test func heldKeyIsReleasedWhenTheDaemonGoesAway() throws {
        let server = try FakeEventServer()
        server.serve(hello: Self.hello, lines: [Self.ndjson(face(0)), Self.ndjson(began("mouthOpen", 1.5))])
        let map = try InputMap.parse(
            Data(#"{"mappings": [{"event": "mouthOpen", "action": {"button": "BTN_LEFT"}, "mode": "hold"}]}"#.utf8))
        let transcript = Transcript()
        let session = InputSession(
            engine: MappingEngine(map: map, injector: PrintingInjector { transcript.append($0); return nil }),
            connector: UnixSocketConnector(path: server.path), sleep: { _ in }, log: { _ in })
        let end = session.run(reconnect: false)
        server.wait()
        #expect(end == .closed)
        #expect(transcript.lines == ["press BTN_LEFT", "release BTN_LEFT"])
    }

    /// The server and its serving thread held each other: every test left its listening socket open until the
    /// test process ended. Once served and dropped, the server is gone (and with it its descriptor).
    @Test func aFakeServerThatHasServedIsReleased() throws {
        weak var released: FakeEventServer?
        try {
            let server = try FakeEventServer()
            released = server
            server.serve(hello: Self.hello, lines: [])
            let client = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(client) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(server.path.utf8) + [0]) }
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(client, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            #expect(rc == 0)
            _ = "\n".withCString { write(client, $0, 1) }
            server.wait()
        }()
        #expect(Wait.until(10) { released == nil }, "the serving thread still holds the server")
    }

    @Test func notWinkdIsReported() throws {
        let server = try FakeEventServer()
        server.serve(hello: "SSH-2.0-OpenSSH", lines: [])
        let map = try InputMap.parse(Data(#"{"mappings": [{"event": "blink", "action": {"key": "KEY_B"}}]}"#.utf8))
        let session = InputSession(
            engine: MappingEngine(map: map, injector: PrintingInjector { _ in nil }),
            connector: UnixSocketConnector(path: server.path), sleep: { _ in }, log: { _ in })
        session.helloTimeout = 2
        #expect(session.run(reconnect: false) == .notWinkd("no winkd hello"))
    }

    /// A newcomer's finding: a frozen winkd (SIGSTOP) left a held button down and `repeat` tapping for as
    /// long as it stayed frozen. After `silenceLimit` seconds without a line, not even a heartbeat, the
    /// connection is dropped and every key let up.
    @Test func aSilentDaemonLetsEveryKeyUp() throws {
        let clock = ManualClock()
        let lines: [LineRead] =
            [.line(Self.hello), .line(Self.ndjson(face(0))), .line(Self.ndjson(began("mouthOpen", 1.5)))]
            + Array(repeating: .timeout, count: 100) + [.line(#"{"type":"heartbeat"}"#)]
            + Array(repeating: .timeout, count: 300)
        let connector = ScriptedConnector([lines], clock: clock)
        let map = try InputMap.parse(
            Data(#"{"mappings": [{"event": "mouthOpen", "action": {"button": "BTN_LEFT"}, "mode": "hold"}]}"#.utf8))
        let transcript = Transcript()
        let session = InputSession(
            engine: MappingEngine(map: map, injector: PrintingInjector { transcript.append($0); return nil }),
            connector: connector, clock: clock, sleep: { _ in }, log: { _ in })
        #expect(session.run(reconnect: false) == .silent(25))
        #expect(transcript.lines == ["press BTN_LEFT", "release BTN_LEFT"])
        // The heartbeat at 10 s counted as a line: the silence ran from there, 25 s of ticks after it.
        #expect(abs(Double(clock.nanoseconds()) / 1e9 - 35) < 0.15, "\(Double(clock.nanoseconds()) / 1e9) s")
    }

    /// A running `winkctl input` whose mapped event a reload removed went on without a word until it next
    /// connected. It subscribes again after `reload_ok`; winkd's refusal names the missing event in one log
    /// line, and the other mappings go on.
    @Test func aReloadThatDropsAMappedEventIsSaidAndTheRestGoOn() throws {
        let clock = ManualClock()
        let lines: [LineRead] = [
            .line(Self.hello), .line(#"{"type":"ok","id":1}"#), .line(Self.ndjson(face(0))),
            .line(#"{"type":"status","state":"reload_ok","source":"/etc/winkd/config.json"}"#),
            .line(#"{"type":"error","id":2,"code":"unknown_event","message":"unknown event 'smile'; known: blink"}"#),
            .line(Self.ndjson(occurred("blink", 3))),
        ]
        let connector = ScriptedConnector([lines], clock: clock)
        let map = try Self.smileAndBlinkMap()
        let transcript = Transcript()
        var logged: [String] = []
        let session = InputSession(
            engine: MappingEngine(map: map, injector: PrintingInjector { transcript.append($0); return nil }),
            connector: connector, clock: clock, sleep: { _ in }, log: { logged.append($0) })
        #expect(session.run(reconnect: false) == .closed)
        let sent = connector.made.first?.sent ?? []
        #expect(sent.count == 2 && sent[0].contains(#""id":1"#) && sent[1].contains(#""id":2"#), "\(sent)")
        #expect(sent.allSatisfy { $0.contains(#""type":"subscribe""#) && $0.contains("smile") })
        #expect(logged == [
            "/scripted.sock: winkd's reloaded configuration lacks events this map uses (unknown event 'smile'; "
                + "known: blink); those mappings stay idle until it offers them again"
        ])
        #expect(transcript.lines == tap("KEY_B"))
        // Another error is logged as before.
        let error = #"{"type":"error","code":"line_too_long","message":"too long"}"#
        let other = ScriptedConnector([[.line(Self.hello), .line(error)]], clock: clock)
        var said: [String] = []
        _ = InputSession(
            engine: MappingEngine(map: map, injector: PrintingInjector { _ in nil }),
            connector: other, clock: clock, sleep: { _ in }, log: { said.append($0) }
        ).run(reconnect: false)
        #expect(said == ["/scripted.sock: daemon error: too long"])
    }

    @Test func ticksBetweenLinesFireMinHoldFromEventTime() throws {
        let clock = ManualClock()
        let lines: [LineRead] =
            [.line(Self.hello), .line(Self.ndjson(face(0))), .line(Self.ndjson(began("smile", 2)))]
            + Array(repeating: .timeout, count: 9)
        let connector = ScriptedConnector([lines], clock: clock)
        let map = try InputMap.parse(
            Data(#"{"mappings": [{"event": "smile", "action": {"key": "KEY_ENTER"}, "minHold": 0.8}]}"#.utf8))
        let transcript = Transcript()
        let session = InputSession(
            engine: MappingEngine(map: map, injector: PrintingInjector { transcript.append($0); return nil }),
            connector: connector, clock: clock, sleep: { _ in }, log: { _ in })
        #expect(session.run(reconnect: false) == .closed)
        #expect(transcript.lines == tap("KEY_ENTER"))  // fired at ~2.8 s by ticks, before the stream closed
    }

    @Test func reconnectsWithBackoffDoublingToFiveSecondsAndResetsAfterAGreeting() throws {
        let clock = ManualClock()
        let connected: [LineRead] = [
            .line(Self.hello), .line(Self.ndjson(face(0))),
            .line(Self.ndjson(began("mouthOpen", 2))),
        ]
        let connector = ScriptedConnector([nil, nil, connected, nil, nil, nil, nil, nil], clock: clock)
        let map = try InputMap.parse(
            Data(#"{"mappings": [{"event": "mouthOpen", "action": {"key": "KEY_A"}, "mode": "hold"}]}"#.utf8))
        let transcript = Transcript()
        var sleeps: [Double] = []
        var logs: [String] = []
        let session = InputSession(
            engine: MappingEngine(map: map, injector: PrintingInjector { transcript.append($0); return nil }),
            connector: connector, clock: clock, sleep: { sleeps.append($0) },
            log: { logs.append($0) }, shouldStop: { sleeps.count >= 8 })
        #expect(session.run(reconnect: true) == .stopped)
        #expect(sleeps == [0.5, 1.0, 0.5, 1.0, 2.0, 4.0, 5.0, 5.0])
        #expect(transcript.lines == ["press KEY_A", "release KEY_A"])
        // A newcomer's finding: after "reconnecting" nothing said the connection was made; "connected", as
        // none had been before ("connected again" follows a connection that was lost).
        #expect(logs[2] == "/scripted.sock: connected", "\(logs)")
        #expect(logs[3] == "/scripted.sock: connection closed; reconnecting in 0.5 s")
        #expect(logs.filter { $0.hasSuffix("connected") }.count == 1, "\(logs)")
    }

    /// A newcomer's finding: winkd restarted with a configuration lacking a mapped event made `winkctl input`
    /// exit 78 (and its unit, `RestartPreventExitStatus=78`, stayed dead), while the same configuration by a
    /// reload only idled those mappings. After the first connection, a restart is treated as a reload.
    @Test func aRestartedDaemonWithoutAMappedEventIsSaidAndTheRestGoOn() throws {
        let clock = ManualClock()
        let lacking = #"{"type":"hello","protocol":"winkd","version":1,"events":["faceFound","faceLost","blink"]}"#
        let first: [LineRead] = [.line(Self.hello), .line(Self.ndjson(face(0)))]
        let second: [LineRead] = [.line(lacking), .line(Self.ndjson(face(0))), .line(Self.ndjson(occurred("blink", 3)))]
        let connector = ScriptedConnector([first, second], clock: clock)
        let map = try Self.smileAndBlinkMap()
        let transcript = Transcript()
        var sleeps: [Double] = []
        var logs: [String] = []
        let session = InputSession(
            engine: MappingEngine(map: map, injector: PrintingInjector { transcript.append($0); return nil }),
            connector: connector, clock: clock, sleep: { sleeps.append($0) }, log: { logs.append($0) },
            shouldStop: { sleeps.count >= 2 })
        #expect(session.run(reconnect: true) == .stopped)
        #expect(connector.made.count == 2)
        let resubscribed = connector.made.last?.sent ?? []
        #expect(resubscribed.count == 1 && resubscribed[0].contains("blink") && !resubscribed[0].contains("smile"),
                "\(resubscribed)")
        #expect(logs.contains(
            "/scripted.sock: winkd's configuration lacks events this map uses (smile); those mappings stay idle "
                + "until it offers them again"), "\(logs)")
        #expect(transcript.lines == tap("KEY_B"))
        #expect(logs.filter { $0.hasSuffix(": connected again") }.count == 1, "\(logs)")
    }

    @Test func aPeerThatIsNotWinkdIsToldApartFromNoDaemon() throws {
        let map = try InputMap.parse(Data(#"{"mappings": [{"event": "blink", "action": {"key": "KEY_B"}}]}"#.utf8))
        let session = InputSession(
            engine: MappingEngine(map: map, injector: PrintingInjector { _ in nil }),
            connector: UnixSocketConnector(path: "/nonexistent/winkin.sock"),
            sleep: { _ in }, log: { _ in })
        #expect(
            session.run(reconnect: false)
                == .connectFailed("/nonexistent/winkin.sock: no winkd listening (is it running?)"))
    }

    /// A helper's finding: the reconnecting line named the socket twice ("/x.sock: cannot connect (/x.sock: no
    /// winkd listening ...)").
    @Test func theReconnectingLineNamesTheSocketOnce() throws {
        let map = try InputMap.parse(Data(#"{"mappings": [{"event": "blink", "action": {"key": "KEY_B"}}]}"#.utf8))
        var logs: [String] = []
        let session = InputSession(
            engine: MappingEngine(map: map, injector: PrintingInjector { _ in nil }),
            connector: UnixSocketConnector(path: "/nonexistent/winkin.sock"),
            sleep: { _ in }, log: { logs.append($0) }, shouldStop: { !logs.isEmpty })
        _ = session.run(reconnect: true)
        #expect(logs.first == "/nonexistent/winkin.sock: cannot connect (no winkd listening (is it running?)); "
            + "reconnecting in 0.5 s", "\(logs)")
    }
}
