import Foundation
import Glibc
import Synchronization
import Testing
import WinkCore

@testable import EventServer

/// Real sockets in a fresh directory under /tmp (short paths: sun_path holds 107 bytes). Serialized: the
/// fd-count test must not see other tests' descriptors.
@Suite(.serialized)
struct EventServerSocketTests {
    static let names = ["faceFound", "faceLost", "blink", "winkLeft", "winkRight", "smile"]

    /// A temp directory, removed by `cleanup`.
    final class Sandbox {
        let directory: String
        init() {
            var template = Array("/tmp/wes-XXXXXX".utf8CString)
            directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        }
        var socket: String { directory + "/events.sock" }
        deinit { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// Thread-safe collector for callbacks.
    final class Recorder<T>: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [T] = []
        func append(_ item: T) { lock.withLock { items.append(item) } }
        var all: [T] { lock.withLock { items } }
    }

    static func event(_ name: String, frame: Int) -> ExpressionEvent {
        ExpressionEvent(event: name, phase: .began, frame: frame, time: Double(frame) / 30, value: 0.5)
    }

    static func fields(_ line: String?) -> [String: Any] {
        guard let line, let data = line.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return object
    }

    static func type(_ line: String?) -> String? { fields(line)["type"] as? String }

    func makeServer(_ sandbox: Sandbox, options: EventServer.Options = .init(), start: Bool = true) throws
        -> EventServer
    {
        let server = try EventServer(path: sandbox.socket, eventNames: Self.names, options: options)
        if start { server.start() }
        return server
    }

    static func waitUntil(_ seconds: Double = 3, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(2000)
        }
        return condition()
    }

    /// This process's descriptors of Unix sockets bound or connected to `path` (the listener, the server's
    /// accepted connections, the test's own client ends). Unlike the count of all descriptors, other tests
    /// running at the same time do not change it: the whole-process count made a leak test flaky (53 before,
    /// 50 after, as another test closed its files meanwhile).
    static func socketDescriptors(at path: String) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { Int32($0) }.filter { fd in
            for name in [getsockname, getpeername] {
                var address = sockaddr_un()
                var length = socklen_t(MemoryLayout<sockaddr_un>.size)
                let ok = withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { name(fd, $0, &length) == 0 }
                }
                guard ok, address.sun_family == sa_family_t(AF_UNIX) else { continue }
                let bound = withUnsafeBytes(of: address.sun_path) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if bound == path { return true }
            }
            return false
        }.count
    }

    // MARK: Greeting and subscriptions

    @Test func helloComesFirstAndNamesTheEvents() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        #expect(client.hello == HelloLine(events: Self.names))
        #expect(Self.type(client.helloLine) == "hello")
        #expect(Self.fields(client.helloLine)["protocol"] as? String == "winkd")
        #expect(Self.fields(client.helloLine)["version"] as? Int == 1)
    }

    @Test func withoutSubscribeEveryEventButNoCoefficients() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        #expect(Self.waitUntil { server.clientCount == 1 })
        server.publish(coefficients: CoefficientsLine(frame: 1, time: 0.03, values: ["jawOpen": 0.2]))
        server.publish(event: Self.event("smile", frame: 2))
        server.publish(event: Self.event("blink", frame: 3))
        let first = try client.nextLine(timeout: 2)
        let second = try client.nextLine(timeout: 2)
        #expect(Self.fields(first)["event"] as? String == "smile")
        #expect(Self.fields(second)["event"] as? String == "blink")
        #expect(try client.nextLine(timeout: 0.1) == nil)
    }

    /// A newcomer's finding: `winkctl status` (connect, ask, leave) started winkd's source: a camera opened
    /// for nobody, a short recording played to its end and winkd exited before anyone listened. A client
    /// counts as listening once it subscribes, or after `listenDelay` connected; one that asks for status
    /// and leaves first never does.
    @Test func aStatusClientIsNotAListener() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let counts = Mutex<[Int]>([])
        server.onClientCountChange = { n in counts.withLock { $0.append(n) } }
        do {
            let asker = try EventClient(path: sandbox.socket)
            try asker.send(line: #"{"type":"status","id":2}"#)
            #expect(Self.type(try asker.nextLine(timeout: 2)) == "status")
            #expect(server.clientCount == 1 && server.listenerCount == 0)
        }
        #expect(Self.waitUntil { server.clientCount == 0 })
        usleep(400_000)  // past the listen delay: the asker has gone, so it never counted
        #expect(counts.withLock { $0 }.isEmpty)
        let subscriber = try EventClient(path: sandbox.socket)
        try subscriber.subscribe(events: [], coefficients: false)
        #expect(Self.waitUntil { server.listenerCount == 1 })
        #expect(Self.waitUntil { counts.withLock { $0 } == [1] })
        let quiet = try EventClient(path: sandbox.socket)  // says nothing: a listener after 0.25 s
        #expect(Self.waitUntil { server.clientCount == 2 })
        #expect(Self.waitUntil { server.listenerCount == 2 })
        #expect(counts.withLock { $0 } == [1, 2])
        _ = quiet
    }

    /// The coefficient line (52 values a frame) is built only while someone asked for it.
    @Test func theCoefficientLineIsBuiltOnlyForASubscriber() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        var built = 0
        func line() -> CoefficientsLine {
            built += 1
            return CoefficientsLine(frame: built, time: 0.1, values: ["jawOpen": 0.2])
        }
        server.publish(coefficients: line())  // nobody connected
        let events = try EventClient(path: sandbox.socket)
        #expect(Self.waitUntil { server.clientCount == 1 })
        server.publish(coefficients: line())  // a client without coefficients
        #expect(built == 0)
        let coefficients = try EventClient(path: sandbox.socket)
        try coefficients.subscribe(events: [], coefficients: true)
        server.publish(coefficients: line())
        #expect(built == 1)
        #expect(Self.type(try coefficients.nextLine(timeout: 2)) == "coefficients")
        #expect(try events.nextLine(timeout: 0.1) == nil)
    }

    @Test func subscribeFiltersEventsAndCoefficients() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        try client.subscribe(events: ["winkLeft"], coefficients: true)
        let other = try EventClient(path: sandbox.socket)
        try other.subscribe(events: ["smile"], coefficients: false)
        server.publish(event: Self.event("smile", frame: 1))
        server.publish(event: Self.event("winkLeft", frame: 2))
        server.publish(coefficients: CoefficientsLine(frame: 3, time: 0.1, values: ["eyeBlinkLeft": 0.9]))
        server.publish(status: StatusLine(state: .sourceOpened, source: "/dev/video0"))
        #expect(Self.fields(try client.nextLine(timeout: 2))["event"] as? String == "winkLeft")
        #expect(Self.type(try client.nextLine(timeout: 2)) == "coefficients")
        #expect(Self.type(try client.nextLine(timeout: 2)) == "status")
        #expect(Self.fields(try other.nextLine(timeout: 2))["event"] as? String == "smile")
        let status = Self.fields(try other.nextLine(timeout: 2))
        #expect(status["type"] as? String == "status" && status["state"] as? String == "source_opened")
        #expect(try other.nextLine(timeout: 0.1) == nil)
    }

    /// Issue 16: `"analyzers":true` gets the table right after the `ok`, again when it is re-announced, and a
    /// `rows` line per published frame; other clients get neither, and `make` is not called for them.
    @Test func analyzersSubscribersGetTheTableAndRowsLines() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        struct Row: Codable, Sendable, Equatable {
            var event: String
            var enter: Double
        }
        let table = AnalyzersLine(rows: [Row(event: "winkLeft", enter: 0.5)])
        try server.announce(analyzers: table)
        let plain = try EventClient(path: sandbox.socket)
        try plain.subscribe(events: ["winkLeft"], coefficients: true)
        var built = 0
        server.publish(rows: {
            built += 1
            return RowsLine(frame: 0, time: 0, tMonoNs: 1, face: true, rows: [])
        })
        #expect(built == 0, "no rows line is built while nobody asked for rows")
        let watcher = try EventClient(path: sandbox.socket)
        try watcher.send(line: #"{"type":"subscribe","id":7,"events":[],"coefficients":true,"analyzers":true}"#)
        #expect(Self.type(try watcher.nextLine(timeout: 2)) == "ok")
        let line = try #require(try watcher.nextLine(timeout: 2))
        #expect(try JSONDecoder().decode(AnalyzersLine<Row>.self, from: Data(line.utf8)) == table)
        let rows = RowsLine(frame: 4, time: 0.133, tMonoNs: 99, face: true,
                            rows: [RowsLine.Row(event: "winkLeft", value: 0.62, state: "pending", held: 0.1)])
        server.publish(rows: { rows })
        let received = try #require(try watcher.nextLine(timeout: 2))
        #expect(try JSONDecoder().decode(RowsLine.self, from: Data(received.utf8)) == rows)
        #expect(received.contains(#""t_mono_ns":99"#))
        try server.announce(analyzers: AnalyzersLine<Row>(rows: []))
        #expect(Self.type(try watcher.nextLine(timeout: 2)) == "analyzers")
        #expect(try plain.nextLine(timeout: 0.1) == nil, "a protocol-1 client sees no new line")
    }

    /// A newcomer's finding: a table of 115 rows with long names was accepted (its `hello` fits), its
    /// `analyzers` line was not (a warning), but every frame's `rows` line was still built, refused and logged
    /// as an error (30 lines a second in the journal) while `winkctl monitor` blamed an old winkd. A table too
    /// large is now described as such (`AnalyzersOmittedLine`) and sends no `rows` lines until one that fits
    /// is announced.
    @Test func aTableTooLargeToDescribeIsSaidSoAndSendsNoRows() throws {
        let sandbox = Sandbox()
        let logged = Mutex<[String]>([])
        let server = try EventServer(
            path: sandbox.socket, eventNames: Self.names, options: .init(),
            log: { _, message in logged.withLock { $0.append(message) } })
        server.start()
        defer { server.stop() }
        struct Row: Codable, Sendable, Equatable { var event: String }
        let huge = AnalyzersLine(rows: (0..<115).map { Row(event: "e\($0)" + String(repeating: "x", count: 62)) })
        #expect(throws: EventServerError.self) { try server.announce(analyzers: huge) }
        let watcher = try EventClient(path: sandbox.socket)
        try watcher.send(line: #"{"type":"subscribe","id":7,"events":[],"coefficients":false,"analyzers":true}"#)
        #expect(Self.type(try watcher.nextLine(timeout: 2)) == "ok")
        let line = try #require(try watcher.nextLine(timeout: 2))
        let omitted = try JSONDecoder().decode(AnalyzersOmittedLine.self, from: Data(line.utf8))
        #expect(omitted.rowCount == 115 && omitted.omitted.hasSuffix("bytes, over the 8 KiB line limit"), "\(line)")
        var built = 0
        for _ in 0..<5 {
            server.publish(rows: {
                built += 1
                return RowsLine(frame: 0, time: 0, tMonoNs: 1, face: true, rows: [])
            })
        }
        #expect(built == 0)
        #expect(try watcher.nextLine(timeout: 0.2) == nil)
        #expect(logged.withLock { $0 }.allSatisfy { !$0.contains("dropped") }, "\(logged.withLock { $0 })")
        // A table that fits is described again and its rows flow.
        try server.announce(analyzers: AnalyzersLine(rows: [Row(event: "winkLeft")]))
        #expect(try watcher.nextLine(timeout: 2)?.contains(#""rows":[{"event":"winkLeft"}]"#) == true)
        server.publish(rows: { RowsLine(frame: 1, time: 0, tMonoNs: 1, face: true, rows: []) })
        #expect(Self.type(try watcher.nextLine(timeout: 2)) == "rows")
    }

    @Test func rawSubscribeGetsOKWithItsID() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        try client.send(line: #"{"type":"subscribe","id":42,"events":["blink"],"coefficients":false}"#)
        let reply = Self.fields(try client.nextLine(timeout: 2))
        #expect(reply["type"] as? String == "ok" && reply["id"] as? Int == 42)
    }

    /// Issue 15: `{"type":"subscribe","coefficients":true}` without `events`: every event plus coefficients.
    @Test func subscribeWithoutEventsGetsEveryEventAndCoefficients() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        try client.subscribe(events: nil, coefficients: true)
        server.publish(event: Self.event("winkLeft", frame: 1))
        server.publish(coefficients: CoefficientsLine(frame: 1, time: 0.1, values: ["eyeBlinkLeft": 0.9]))
        server.publish(event: Self.event("smile", frame: 2))
        #expect(Self.fields(try client.nextLine(timeout: 2))["event"] as? String == "winkLeft")
        #expect(Self.type(try client.nextLine(timeout: 2)) == "coefficients")
        #expect(Self.fields(try client.nextLine(timeout: 2))["event"] as? String == "smile")
    }

    /// Issue 15: `{"type":"status","id":2}` is answered to the asker alone, with its id, the source's
    /// report and the number of clients.
    @Test func statusRequestIsAnsweredWithTheSourceClientsAndFPS() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        let other = try EventClient(path: sandbox.socket)
        try client.send(line: #"{"type":"status","id":2}"#)
        let idle = Self.fields(try client.nextLine(timeout: 2))
        #expect(idle["type"] as? String == "status" && idle["id"] as? Int == 2 && idle["state"] as? String == "idle")
        #expect(idle["clients"] as? Int == 2 && idle["fps"] as? Double == 0)
        server.sourceReport = { .init(state: .sourceOpened, source: "/dev/video0", fps: 29.97) }
        let answer = try client.status().status
        #expect(answer.id == 1 && answer.state == .sourceOpened && answer.source == "/dev/video0")
        #expect(answer.clients == 2 && answer.fps == 29.97)
        #expect(try other.nextLine(timeout: 0.2) == nil, "the answer goes to the asker only")
    }

    @Test func unknownEventGetsAnErrorLine() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        try client.send(line: #"{"type":"subscribe","id":1,"events":["frown"]}"#)
        let reply = Self.fields(try client.nextLine(timeout: 2))
        #expect(reply["type"] as? String == "error")
        #expect(reply["code"] as? String == "unknown_event" && reply["id"] as? Int == 1)
        #expect((reply["message"] as? String)?.contains("frown") == true)
        #expect(throws: EventServerError.self) { try client.subscribe(events: ["frown"], coefficients: false) }
    }

    @Test func malformedJSONGetsAnErrorAndTheConnectionStaysUsable() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        try client.send(line: #"{"type": subscribe"#)
        var reply = Self.fields(try client.nextLine(timeout: 2))
        #expect(reply["type"] as? String == "error" && reply["code"] as? String == "bad_json")
        try client.send(line: #"{"type":"jump","id":5}"#)
        reply = Self.fields(try client.nextLine(timeout: 2))
        #expect(reply["code"] as? String == "unknown_type" && reply["id"] as? Int == 5)
        try client.send(line: #"{"type":"subscribe","id":6,"events":"blink"}"#)
        reply = Self.fields(try client.nextLine(timeout: 2))
        #expect(reply["code"] as? String == "bad_request" && reply["id"] as? Int == 6)
        try client.subscribe(events: ["blink"], coefficients: false)
        server.publish(event: Self.event("blink", frame: 9))
        #expect(Self.fields(try client.nextLine(timeout: 2))["frame"] as? Int == 9)
    }

    @Test func oversizedLineGetsAnErrorThenDisconnect() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        try client.send(bytes: [UInt8](repeating: 0x61, count: 9000))
        let reply = Self.fields(try client.nextLine(timeout: 2))
        #expect(reply["type"] as? String == "error" && reply["code"] as? String == "line_too_long")
        #expect(try client.nextLine(timeout: 2) == nil)
        #expect(Self.waitUntil { server.clientCount == 0 })
    }

    @Test func halfSentLineIsCompletedLater() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        try client.send(bytes: Array(#"{"type":"subscribe","id":3,"#.utf8))
        #expect(try client.nextLine(timeout: 0.2) == nil)
        try client.send(bytes: Array(#""events":["smile"]}"#.utf8) + [0x0A])
        let reply = Self.fields(try client.nextLine(timeout: 2))
        #expect(reply["type"] as? String == "ok" && reply["id"] as? Int == 3)
    }

    // MARK: Slow and vanishing clients

    @Test func neverReadingClientDoesNotHoldUpOthersOrPublish() throws {
        let sandbox = Sandbox()
        // A roomy queue absorbs scheduling hiccups of the reading thread on a loaded machine.
        let server = try makeServer(sandbox, options: .init(queueCapacity: 1024, writeTimeout: 0.8))
        defer { server.stop() }
        let stuck = try LinuxSocketSyscalls().connect(path: sandbox.socket)
        defer { LinuxSocketSyscalls().close(stuck) }
        let reader = try EventClient(path: sandbox.socket)
        #expect(Self.waitUntil { server.clientCount == 2 })

        let total = 5000
        let received = Recorder<Int>()
        let done = DispatchSemaphore(value: 0)
        let readerThread = Thread {
            while received.all.count < total, let line = try? reader.nextLine(timeout: 3) {
                if let frame = Self.fields(line)["frame"] as? Int { received.append(frame) }
            }
            done.signal()
        }
        readerThread.start()

        var slowest = 0.0
        let started = Date()
        for frame in 0..<total {
            let t0 = Date()
            server.publish(event: Self.event("smile", frame: frame))
            slowest = max(slowest, Date().timeIntervalSince(t0))
            if frame % 50 == 49 { usleep(2000) }  // a camera's pace is far slower; the reader keeps up
        }
        let publishing = Date().timeIntervalSince(started)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(received.all == Array(0..<total))
        #expect(slowest < 0.05, "a publish call took \(slowest) s")
        #expect(publishing < 5)

        // The stuck client lost lines: it is disconnected for making no progress (it never gets to
        // catch up, so it never sees the dropped notice).
        #expect(Self.waitUntil(3) { server.clientCount == 1 })
        var bytes = [UInt8](repeating: 0, count: 1 << 16)
        var lines = 0
        var types: [String] = []
        var splitter = LineSplitter()
        while let n = try? bytes.withUnsafeMutableBytes({ try LinuxSocketSyscalls().read(stuck, into: $0) }), n > 0 {
            for case .line(let line) in splitter.append(bytes[0..<n]) {
                lines += 1
                if let type = Self.type(String(decoding: line, as: UTF8.self)), type != "event" { types.append(type) }
            }
        }
        #expect(lines < total)
        #expect(types.first == "hello")
    }

    @Test func slowClientGetsDroppedNoticeWhereLinesWereLost() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox, options: .init(queueCapacity: 16, writeTimeout: 10))
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        #expect(Self.waitUntil { server.clientCount == 1 })
        let total = 3000  // far more than the kernel buffer (~43 KB) plus 16 queued lines
        for frame in 0..<total { server.publish(event: Self.event("blink", frame: frame)) }
        var frames: [Int] = []
        var dropped: [Int] = []
        var droppedAt: [Int] = []
        while let line = try client.nextLine(timeout: 0.5) {
            let fields = Self.fields(line)
            if let frame = fields["frame"] as? Int { frames.append(frame) }
            if fields["type"] as? String == "dropped", let count = fields["count"] as? Int {
                dropped.append(count)
                droppedAt.append(frames.count)
            }
            if frames.last == total - 1 { break }
        }
        #expect(!dropped.isEmpty)
        #expect(frames.count + dropped.reduce(0, +) == total)
        #expect(frames == frames.sorted())
        #expect(frames.last == total - 1)
        // Each notice sits exactly at its gap.
        for (count, index) in zip(dropped, droppedAt) where index > 0 && index < frames.count {
            #expect(frames[index] - frames[index - 1] == count + 1)
        }
    }

    /// What a client that reads `chunk` bytes every `interval` seconds for `seconds` (blocking reads), then
    /// at full speed until nothing comes for a second, received: the lines' types, and whether the server
    /// closed the connection.
    static func readSlowly(_ fd: Int32, seconds: Double, chunk: Int, interval: Double) -> (types: [String], closed: Bool) {
        var splitter = LineSplitter()
        var types: [String] = []
        var closed = false
        var buffer = [UInt8](repeating: 0, count: chunk)
        func take() {
            let read = try? buffer.withUnsafeMutableBytes { try LinuxSocketSyscalls().read(fd, into: $0) }
            guard let n = read ?? nil, n > 0 else {
                closed = true
                return
            }
            for case .line(let line) in splitter.append(buffer[0..<n]) {
                types.append(Self.type(String(decoding: line, as: UTF8.self)) ?? "?")
            }
        }
        let end = Date().addingTimeInterval(seconds)
        while Date() < end && !closed {
            take()
            usleep(UInt32(interval * 1e6))
        }
        var pfd = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        while !closed, (try? LinuxSocketSyscalls().poll(&pfd, timeoutMilliseconds: 1000)) ?? 0 > 0 { take() }
        return (types, closed)
    }

    /// Runs `body` with a server of `options` and one raw client it has accepted; closes both after.
    func withRawClient(_ options: EventServer.Options, _ body: (EventServer, Int32) throws -> Void) throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox, options: options)
        defer { server.stop() }
        let fd = try LinuxSocketSyscalls().connect(path: sandbox.socket)
        defer { LinuxSocketSyscalls().close(fd) }
        #expect(Self.waitUntil { server.clientCount == 1 })
        try body(server, fd)
    }

    /// What a slow reader must see: still connected, and told (`dropped`) that lines were lost.
    static func expectStayedAndToldOfLoss(
        _ read: (types: [String], closed: Bool), _ server: EventServer,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(!read.closed, "the slow reader was disconnected after \(read.types.count) lines",
                sourceLocation: sourceLocation)
        #expect(server.clientCount == 1, sourceLocation: sourceLocation)
        let sawDropped = read.types.contains("dropped")
        #expect(sawDropped, "\(read.types.count) lines, none of them dropped", sourceLocation: sourceLocation)
    }

    /// A newcomer's client read coefficient lines at 20 a second against the stream's 30 (and one read 2,000
    /// bytes a second): it took bytes all along, yet after a minute or so it was disconnected as "not reading"
    /// and never got a `dropped` line. The kernel frees a unix socket's write memory one sent chunk at a time,
    /// once the peer has read all of it, and winkd sent up to 64 KiB at once: a slow reader freed nothing for
    /// longer than the write timeout. Sends are 4 KiB at most now (here: a timeout of 2 s, a reader of 5 KB a
    /// second, who frees a 4 KiB chunk every 0.8 s and a 36 KiB one every 7 s).
    @Test func aClientReadingSlowerThanTheStreamStaysAndLearnsOfTheLinesItLost() throws {
        try withRawClient(.init(queueCapacity: 1024, writeTimeout: 2)) { server, fd in
            let publishing = DispatchSemaphore(value: 0)
            let publisher = Thread {
                // About 200 KB a second (20 event lines every 10 ms) for 6 s, forty times what the client reads:
                // the socket buffer is full within a second and a long queue waits behind it.
                let end = Date().addingTimeInterval(6)
                var frame = 0
                while Date() < end {
                    for _ in 0..<20 {
                        server.publish(event: Self.event("smile", frame: frame))
                        frame += 1
                    }
                    usleep(10_000)
                }
                publishing.signal()
            }
            publisher.start()
            let read = Self.readSlowly(fd, seconds: 6, chunk: 500, interval: 0.1)
            #expect(publishing.wait(timeout: .now() + 10) == .success)
            Self.expectStayedAndToldOfLoss(read, server)
            #expect(read.types.first == "hello")
        }
    }

    /// The same reader after a burst, with nothing published since (no new line wakes the server to try a
    /// send; poll(2) calls a unix socket writable only once three quarters of its buffer drained, 15 s at
    /// this pace): the send tried at the write timeout finds the room a 4 KiB chunk read whole left.
    @Test func aClientReadingABurstSlowlyStays() throws {
        try withRawClient(.init(queueCapacity: 1024, writeTimeout: 2)) { server, fd in
            for frame in 0..<4000 { server.publish(event: Self.event("smile", frame: frame)) }  // about 440 KB
            Self.expectStayedAndToldOfLoss(Self.readSlowly(fd, seconds: 5, chunk: 1000, interval: 0.1), server)
        }
    }

    /// A status line published while a slow client's queue overflows reaches it (the events around it are
    /// what it loses).
    @Test func aStatusLineOutlivesAnOverflowingQueue() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox, options: .init(queueCapacity: 16, writeTimeout: 10))
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        #expect(Self.waitUntil { server.clientCount == 1 })
        for frame in 0..<3000 { server.publish(event: Self.event("blink", frame: frame)) }
        server.publish(status: StatusLine(state: .reloadOk, message: "configuration reloaded"))
        for frame in 3000..<6000 { server.publish(event: Self.event("blink", frame: frame)) }
        var types: [String] = []
        var last = -1
        while last < 5999, let line = try client.nextLine(timeout: 1) {
            let fields = Self.fields(line)
            types.append(fields["type"] as? String ?? "?")
            if let frame = fields["frame"] as? Int { last = frame }
        }
        #expect(last == 5999)
        #expect(types.contains("dropped"))
        #expect(types.filter { $0 == "status" }.count == 1, "the reload_ok line was lost")
    }

    /// A helper's finding: a slow reader's lines were about 35 s old (the kernel's default send buffer held
    /// some 1,000 coefficient lines before any was dropped). Each client's buffer is 64 KiB now: a client that
    /// reads nothing while a flood is published has at most that much and a piece waiting in its socket
    /// (`FIONREAD`).
    @Test func aClientsSendBufferHoldsLittleOfTheStream() throws {
        func inFlightAfterAFlood(sendBufferSize: Int32?) throws -> Int32 {
            var options = EventServer.Options(queueCapacity: 1024, writeTimeout: 10)
            options.sendBufferSize = sendBufferSize
            var waiting: Int32 = 0
            try withRawClient(options) { server, fd in
                for frame in 0..<6000 { server.publish(event: Self.event("blink", frame: frame)) }
                var last: Int32 = -1
                // Until the server has filled the socket (the amount stops growing).
                while waiting != last {
                    last = waiting
                    usleep(200_000)
                    _ = ioctl(fd, UInt(FIONREAD), &waiting)
                }
            }
            return waiting
        }
        let shipped = try inFlightAfterAFlood(sendBufferSize: EventServer.Options().sendBufferSize)
        let kernelDefault = try inFlightAfterAFlood(sendBufferSize: nil)
        // The kernel takes a send while the socket's memory is under its buffer size, so at most one 4 KiB piece
        // goes over 64 KiB (about 106 KB waited with the default here).
        #expect(shipped < 65536 + 4096, "\(shipped) bytes waiting, \(kernelDefault) with the kernel's default")
    }

    @Test func abruptlyClosedClientDoesNotDisturbTheServer() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let keeper = try EventClient(path: sandbox.socket)
        // A client that vanishes with unread data both ways, as a SIGKILLed process does.
        let doomed = try LinuxSocketSyscalls().connect(path: sandbox.socket)
        #expect(Self.waitUntil { server.clientCount == 2 })
        _ = Array(#"{"type":"subscr"#.utf8).withUnsafeBytes { try? LinuxSocketSyscalls().send(doomed, $0) }
        // 200 lines in a burst fit the keeper's 256-line queue, so it must get every one.
        for frame in 0..<100 { server.publish(event: Self.event("smile", frame: frame)) }
        LinuxSocketSyscalls().close(doomed)
        for frame in 100..<200 { server.publish(event: Self.event("smile", frame: frame)) }
        var frames: [Int] = []
        while frames.count < 200, let line = try keeper.nextLine(timeout: 2) {
            if let frame = Self.fields(line)["frame"] as? Int { frames.append(frame) }
        }
        #expect(frames == Array(0..<200))
        #expect(Self.waitUntil { server.clientCount == 1 })
    }

    @Test func halfClosedClientStillReceives() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        try client.subscribe(events: ["smile"], coefficients: false)
        #expect(client.shutDownSending())  // like `nc -U` after its stdin ends
        usleep(50_000)
        server.publish(event: Self.event("blink", frame: 1))
        server.publish(event: Self.event("smile", frame: 2))
        #expect(Self.fields(try client.nextLine(timeout: 2))["frame"] as? Int == 2)
        #expect(server.clientCount == 1)
    }

    @Test func manyConnectDisconnectCyclesLeakNoDescriptors() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let before = Self.socketDescriptors(at: sandbox.socket)
        #expect(before == 1, "the listening socket")
        for i in 0..<500 {
            let fd = try LinuxSocketSyscalls().connect(path: sandbox.socket)
            if i % 2 == 0 {
                _ = Array("{\"type\":\"x\"}\n".utf8).withUnsafeBytes { try? LinuxSocketSyscalls().send(fd, $0) }
            }
            LinuxSocketSyscalls().close(fd)
        }
        #expect(Self.waitUntil(5) { server.clientCount == 0 && Self.socketDescriptors(at: sandbox.socket) == before })
        #expect(Self.socketDescriptors(at: sandbox.socket) == before)
        // Still serving.
        let client = try EventClient(path: sandbox.socket)
        #expect(client.hello.events == Self.names)
    }

    @Test func tooManyClientsGetAnErrorLine() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox, options: .init(maximumClients: 2))
        defer { server.stop() }
        let a = try EventClient(path: sandbox.socket)
        let b = try EventClient(path: sandbox.socket)
        #expect(Self.waitUntil { server.clientCount == 2 })
        // A newcomer's finding: the client took the refusal for "not a winkd hello: {...", exit 65.
        do {
            _ = try EventClient(path: sandbox.socket, timeout: 2)
            Issue.record("a third client was let in")
        } catch let e as EventServerError {
            #expect(e.code == .full && e.code.exitCode == .unavailable, "\(e)")
            #expect(
                e.reason == "winkd is full: winkd serves at most 2 clients (socket.maximumClients); "
                    + "try again when one leaves", "\(e)")
        }
        let third = try LinuxSocketSyscalls().connect(path: sandbox.socket)
        defer { LinuxSocketSyscalls().close(third) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var fds = [pollfd(fd: third, events: Int16(POLLIN), revents: 0)]
        _ = try LinuxSocketSyscalls().poll(&fds, timeoutMilliseconds: 2000)
        let n = try buffer.withUnsafeMutableBytes { try LinuxSocketSyscalls().read(third, into: $0) } ?? 0
        let lines = String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n").map(String.init)
        let reply = Self.fields(lines.first)
        #expect(reply["type"] as? String == "error" && reply["code"] as? String == "too_many_clients")
        // The daemon's state follows in the same write, as a status answer without an id.
        let state = Self.fields(lines.dropFirst().first)
        #expect(state["type"] as? String == "status" && state["state"] as? String == "idle", "\(lines)")
        #expect(state["clients"] as? Int == 2 && state["id"] == nil && state["full"] as? Bool == true, "\(lines)")
        _ = (a, b)
    }

    /// `winkctl status` on a full daemon could only say "winkd is full": the state now comes with the
    /// refusal, and `EventClient.askStatus` returns it with the refusal's message.
    @Test func aFullServerCanStillBeAskedItsState() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox, options: .init(maximumClients: 1))
        defer { server.stop() }
        server.sourceReport = {
            EventServer.SourceReport(state: .sourceOpened, source: "/dev/video3", fps: 29.5, message: nil)
        }
        let asked = try EventClient.askStatus(path: sandbox.socket)
        #expect(asked.full == nil && asked.status.id == 1 && asked.status.clients == 1, "\(asked.line)")
        #expect(asked.status.full == nil && !asked.line.contains("full"), "\(asked.line)")
        let kept = try EventClient(path: sandbox.socket)
        #expect(Self.waitUntil { server.clientCount == 1 })
        let full = try EventClient.askStatus(path: sandbox.socket)
        #expect(full.full == "winkd serves at most 1 client", "\(full)")
        #expect(full.status.state == .sourceOpened && full.status.source == "/dev/video3", "\(full.line)")
        #expect(full.status.fps == 29.5 && full.status.clients == 1 && full.status.id == nil, "\(full.line)")
        #expect(Self.fields(full.line)["type"] as? String == "status")
        _ = kept
    }

    /// A daemon that refuses without its state (older than that) is still "winkd is full", exit 69.
    @Test func aRefusalWithoutStateIsFull() throws {
        let sandbox = Sandbox()
        let listener = try LinuxSocketSyscalls().bindListen(path: sandbox.socket, mode: 0o600, backlog: 4)
        defer { close(listener) }
        let answering = Thread {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            let refusal = #"{"type":"error","code":"too_many_clients","message":"winkd serves at most 1 client"}"#
            _ = Array((refusal + "\n").utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        answering.start()
        do {
            _ = try EventClient.askStatus(path: sandbox.socket, timeout: 3)
            Issue.record("a refusal without state was taken as a status")
        } catch let e as EventServerError {
            #expect(e.code == .full, "\(e)")
            #expect(e.reason.hasPrefix("winkd is full: winkd serves at most 1 client"), "\(e)")
        }
    }

    /// A newcomer's finding: 300 connections in a burst logged 236 "refused a client" warnings. Refusals are
    /// logged at most once every 10 s, the next line counting those left out.
    @Test func refusalsAreLoggedAtMostOnceEveryTenSeconds() throws {
        let sandbox = Sandbox()
        let logged = Mutex<[String]>([])
        let server = try EventServer(
            path: sandbox.socket, eventNames: Self.names, options: .init(maximumClients: 1),
            log: { _, message in logged.withLock { $0.append(message) } })
        server.start()
        defer { server.stop() }
        let kept = try EventClient(path: sandbox.socket)
        #expect(Self.waitUntil { server.clientCount == 1 })
        for _ in 0..<20 {
            let fd = try LinuxSocketSyscalls().connect(path: sandbox.socket)
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            _ = try LinuxSocketSyscalls().poll(&fds, timeoutMilliseconds: 2000)  // the refusal came
            LinuxSocketSyscalls().close(fd)
        }
        let refusals = logged.withLock { $0.filter { $0.contains("too many clients") } }
        #expect(refusals.count == 1, "\(refusals)")
        _ = kept
    }

    @Test func heartbeatReachesAnIdleClient() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox, options: .init(heartbeatInterval: 0.2))
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        let line = Self.fields(try client.nextLine(timeout: 2))
        #expect(line["type"] as? String == "heartbeat")
        #expect(abs((line["time"] as? Double ?? 0) - Date().timeIntervalSince1970) < 5)
    }

    // MARK: Binding

    @Test func staleSocketFileIsReplaced() throws {
        let sandbox = Sandbox()
        let fd = try LinuxSocketSyscalls().bindListen(path: sandbox.socket, mode: 0o600, backlog: 1)
        LinuxSocketSyscalls().close(fd)  // a daemon that died without unlinking
        #expect(FileManager.default.fileExists(atPath: sandbox.socket))
        let server = try makeServer(sandbox)
        defer { server.stop() }
        let client = try EventClient(path: sandbox.socket)
        #expect(client.hello.events == Self.names)
    }

    @Test func liveSocketIsRefusedAsInUse() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        defer { server.stop() }
        do {
            _ = try EventServer(path: sandbox.socket, eventNames: Self.names)
            Issue.record("a second server bound a live socket")
        } catch let error as EventServerError {
            #expect(error.code == .inUse)
            #expect(error.exitCode == .unavailable)
            #expect(error.description.contains("another winkd is listening"))
        }
        // The first one still serves.
        #expect(try EventClient(path: sandbox.socket).hello.version == 1)
    }

    @Test func regularFileIsNotReplaced() throws {
        let sandbox = Sandbox()
        #expect(FileManager.default.createFile(atPath: sandbox.socket, contents: Data("keep".utf8)))
        #expect(
            throws: EventServerError(
                .notASocket, subject: sandbox.socket,
                reason: "exists and is not a socket; refusing to replace it")
        ) {
            _ = try EventServer(path: sandbox.socket, eventNames: Self.names)
        }
        #expect(FileManager.default.contents(atPath: sandbox.socket) == Data("keep".utf8))
    }

    @Test func tooLongPathIsRefused() throws {
        let path = "/tmp/" + String(repeating: "x", count: 103)  // 108 bytes
        do {
            _ = try EventServer(path: path, eventNames: Self.names)
            Issue.record("bound a path longer than sun_path")
        } catch let error as EventServerError {
            #expect(error.code == .pathTooLong)
            #expect(error.exitCode == .usage)
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func socketModeIsSetAtBindAndParentIsCreated() throws {
        let sandbox = Sandbox()
        let path = sandbox.directory + "/sub/events.sock"
        let server = try EventServer(path: path, eventNames: Self.names)
        defer { server.stop() }
        var st = stat()
        #expect(lstat(path, &st) == 0)
        #expect(st.st_mode & S_IFMT == S_IFSOCK)
        #expect(st.st_mode & 0o777 == 0o600)
        #expect(lstat(sandbox.directory + "/sub", &st) == 0)
        #expect(st.st_mode & 0o777 == 0o700)

        let groupPath = sandbox.directory + "/group.sock"
        let groupServer = try EventServer(path: groupPath, eventNames: Self.names, options: .init(mode: 0o660))
        defer { groupServer.stop() }
        #expect(lstat(groupPath, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o660)
    }

    // MARK: Stopping and callbacks

    @Test func stopSendsByeAndRemovesTheFile() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        let client = try EventClient(path: sandbox.socket)
        #expect(Self.waitUntil { server.clientCount == 1 })
        server.publish(event: Self.event("smile", frame: 1))
        server.stop(reason: "end_of_input")
        #expect(Self.fields(try client.nextLine(timeout: 2))["event"] as? String == "smile")
        let bye = Self.fields(try client.nextLine(timeout: 2))
        #expect(bye["type"] as? String == "bye" && bye["reason"] as? String == "end_of_input")
        #expect(try client.nextLine(timeout: 1) == nil)
        #expect(!FileManager.default.fileExists(atPath: sandbox.socket))
        #expect(
            throws: EventServerError(
                .noDaemon, subject: sandbox.socket,
                reason: "no winkd listening (is it running?)")
        ) {
            _ = try EventClient(path: sandbox.socket)
        }
    }

    @Test func stopLeavesAReplacedSocketFileAlone() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        try FileManager.default.removeItem(atPath: sandbox.socket)
        let other = try LinuxSocketSyscalls().bindListen(path: sandbox.socket, mode: 0o600, backlog: 1)
        defer { LinuxSocketSyscalls().close(other) }
        server.stop()
        #expect(FileManager.default.fileExists(atPath: sandbox.socket))
    }

    @Test func stopSaysByeToEveryClientAndClosesThem() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox)
        let clients = [try EventClient(path: sandbox.socket), try EventClient(path: sandbox.socket)]
        #expect(Self.waitUntil { server.clientCount == 2 })
        server.stop(reason: "end_of_input")
        for client in clients {
            #expect(Self.fields(try client.nextLine(timeout: 2))["reason"] as? String == "end_of_input")
            #expect(try client.nextLine(timeout: 1) == nil)
        }
        #expect(server.clientCount == 0)
    }

    @Test func clientCountCallbackFires() throws {
        let sandbox = Sandbox()
        let server = try makeServer(sandbox, start: false)
        let counts = Recorder<Int>()
        server.onClientCountChange = { counts.append($0) }
        server.start()
        defer { server.stop() }
        var a: EventClient? = try EventClient(path: sandbox.socket)
        #expect(Self.waitUntil { counts.all == [1] })
        var b: EventClient? = try EventClient(path: sandbox.socket)
        #expect(Self.waitUntil { counts.all == [1, 2] })
        a = nil
        b = nil
        #expect(Self.waitUntil { counts.all.last == 0 })
        #expect(counts.all.first == 1 && counts.all.contains(2))
        _ = (a, b)
    }

    @Test func logHandlerReceivesPeerCredentials() throws {
        let sandbox = Sandbox()
        let messages = Recorder<String>()
        let server = try EventServer(path: sandbox.socket, eventNames: Self.names) { _, message in
            messages.append(message)
        }
        server.start()
        defer { server.stop() }
        _ = try EventClient(path: sandbox.socket)
        #expect(Self.waitUntil { messages.all.contains { $0.contains("pid \(getpid()), uid \(getuid())") } })
    }

    // MARK: Socket activation

    @Test func inheritedSocketIsFoundAndServed() throws {
        let sandbox = Sandbox()
        let fd = try LinuxSocketSyscalls().bindListen(path: sandbox.socket, mode: 0o600, backlog: 8)
        let env = ["LISTEN_PID": "\(getpid())", "LISTEN_FDS": "1"]
        #expect(try SocketActivation.listeningSocket(environment: env, firstDescriptor: fd) == fd)
        #expect(
            try SocketActivation.listeningSocket(
                environment: ["LISTEN_PID": "1", "LISTEN_FDS": "1"],
                firstDescriptor: fd) == nil)
        #expect(try SocketActivation.listeningSocket(environment: [:], firstDescriptor: fd) == nil)
        let server = try EventServer(listeningFD: fd, eventNames: Self.names)
        #expect(server.path == sandbox.socket)
        server.start()
        #expect(try EventClient(path: sandbox.socket).hello.events == Self.names)
        server.stop()
        // The server never unlinks a path it did not bind.
        #expect(FileManager.default.fileExists(atPath: sandbox.socket))
    }

    @Test func inheritedNonSocketIsRefused() throws {
        let sandbox = Sandbox()
        let fd = open(sandbox.directory, O_RDONLY | O_CLOEXEC)
        defer { close(fd) }
        #expect(throws: EventServerError.self) {
            _ = try SocketActivation.listeningSocket(
                environment: ["LISTEN_PID": "\(getpid())", "LISTEN_FDS": "1"],
                firstDescriptor: fd)
        }
        #expect(throws: EventServerError.self) { _ = try EventServer(listeningFD: fd, eventNames: Self.names) }
    }
}
