import Foundation
import Testing

@testable import EventServer

struct LineSplitterTests {
    @Test func splitsCompleteLinesAndKeepsTheRest() {
        var splitter = LineSplitter()
        #expect(splitter.append(Array("{\"a\":1}\n{\"b\"".utf8)) == [.line(Array("{\"a\":1}".utf8))])
        #expect(splitter.pendingByteCount == 4)
        #expect(splitter.append(Array(":2}\r\n\n".utf8)) == [.line(Array("{\"b\":2}".utf8))])
        #expect(splitter.pendingByteCount == 0)
    }

    /// A line of spaces was `bad_json` while an empty line was skipped (a newcomer's finding): both skipped.
    @Test func blankLinesOfWhiteSpaceAreSkippedLikeEmptyOnes() {
        var splitter = LineSplitter()
        #expect(splitter.append(Array("   \n\t \r\n\r\n{\"a\":1}\n x\n".utf8))
                == [.line(Array("{\"a\":1}".utf8)), .line(Array(" x".utf8))])
    }

    @Test func byteByByteGivesTheSameLines() {
        var splitter = LineSplitter()
        var lines: [LineSplitter.Item] = []
        for byte in Array("one\ntwo\nthree\n".utf8) { lines += splitter.append([byte]) }
        #expect(lines == ["one", "two", "three"].map { .line(Array($0.utf8)) })
    }

    @Test func aLineOfExactlyTheLimitPassesOneMoreByteFails() {
        var splitter = LineSplitter(maximumLineBytes: 8)
        #expect(splitter.append(Array("12345678\n".utf8)) == [.line(Array("12345678".utf8))])
        #expect(splitter.append(Array("12345678\r\n".utf8)) == [.line(Array("12345678".utf8))])
        #expect(splitter.append(Array("123456789".utf8)) == [.tooLong])
        #expect(splitter.overflowed)
        #expect(splitter.append(Array("\nok\n".utf8)) == [])
    }

    @Test func protocolLimitIs8KiB() {
        var splitter = LineSplitter()
        let long = [UInt8](repeating: 0x61, count: 8192)
        #expect(splitter.append(long + [0x0A]) == [.line(long)])
        #expect(splitter.append(long + [0x61]) == [.tooLong])
    }
}

struct ClientMessageTests {
    private func parse(_ text: String) throws -> ClientMessage { try ClientMessage.parse(Array(text.utf8)) }

    private func code(_ text: String) -> (ProtocolError.Code?, Int?) {
        do {
            _ = try parse(text)
            return (nil, nil)
        } catch let error as ProtocolError {
            return (error.code, error.id)
        } catch {
            return (nil, nil)
        }
    }

    @Test func parsesSubscribe() throws {
        #expect(
            try parse(#"{"type":"subscribe","id":1,"events":["winkLeft","winkRight"],"coefficients":false}"#)
                == .subscribe(id: 1, events: ["winkLeft", "winkRight"], coefficients: false))
        #expect(
            try parse(#"{"type":"subscribe","events":[],"coefficients":true}"#)
                == .subscribe(id: nil, events: [], coefficients: true))
        #expect(
            try parse(#"{"events":["smile"],"type":"subscribe"}"#)
                == .subscribe(id: nil, events: ["smile"], coefficients: false))
    }

    /// A newcomer's finding: `"events"` given twice subscribed to the first list, without a word.
    /// A request is one line: its repeated key is named without "(lines 1 and 1)" (a newcomer's finding).
    @Test func aKeyGivenTwiceIsABadRequest() throws {
        let twice = #"{"type":"subscribe","id":4,"events":["smile"],"events":["winkLeft","nod"]}"#
        #expect(code(twice) == (.badRequest, 4))
        do {
            _ = try parse(#"{"type":"status","type":"subscribe"}"#)
            Issue.record("accepted")
        } catch let error as ProtocolError {
            #expect(error.message == "type: given twice in one object; JSON keeps only one of them")
        }
    }

    /// Issue 15: a subscribe without `events` (or with null) means every event, as before any subscribe.
    @Test func subscribeWithoutEventsMeansEveryEvent() throws {
        #expect(
            try parse(#"{"type":"subscribe","coefficients":true}"#)
                == .subscribe(id: nil, events: nil, coefficients: true))
        #expect(
            try parse(#"{"type":"subscribe","id":4,"events":null}"#)
                == .subscribe(id: 4, events: nil, coefficients: false))
    }

    @Test func parsesStatus() throws {
        #expect(try parse(#"{"type":"status","id":2}"#) == .status(id: 2))
        #expect(try parse(#"{"type":"status"}"#) == .status(id: nil))
    }

    /// `"analyzers":true` (issue 16) is optional, false by default, and must be a boolean.
    @Test func parsesTheAnalyzersOptInAndAppliesIt() throws {
        #expect(
            try parse(#"{"type":"subscribe","events":[],"coefficients":true,"analyzers":true}"#)
                == .subscribe(id: nil, events: [], coefficients: true, analyzers: true))
        #expect(
            try parse(#"{"type":"subscribe","events":[]}"#)
                == .subscribe(id: nil, events: [], coefficients: false, analyzers: false))
        #expect(code(#"{"type":"subscribe","id":3,"events":[],"analyzers":"yes"}"#) == (.badRequest, 3))
        var s = Subscription()
        #expect(!s.analyzers)
        _ = try s.apply(id: nil, events: [], coefficients: false, analyzers: true, knownEvents: [])
        #expect(s.analyzers)
    }

    @Test func malformedJSONIsBadJSON() {
        #expect(code("{\"type\":").0 == .badJSON)
        #expect(code("[1,2]").0 == .badJSON)
        #expect(code("hello").0 == .badJSON)
        #expect(code("\"subscribe\"").0 == .badJSON)
        #expect(ClientMessageTests.invalidUTF8Code() == .badJSON)
    }

    static func invalidUTF8Code() -> ProtocolError.Code? {
        do {
            _ = try ClientMessage.parse([0x7B, 0xFF, 0xFE, 0x7D])
            return nil
        } catch {
            return (error as? ProtocolError)?.code
        }
    }

    @Test func unknownTypeKeepsTheID() {
        let (c, id) = code(#"{"type":"dance","id":7}"#)
        #expect(c == .unknownType)
        #expect(id == 7)
    }

    @Test func missingOrMistypedFieldsAreBadRequest() {
        #expect(code(#"{"id":3}"#) == (.badRequest, 3))
        #expect(code(#"{"type":"subscribe","events":"smile"}"#).0 == .badRequest)
        #expect(code(#"{"type":"subscribe","events":[1]}"#).0 == .badRequest)
        #expect(code(#"{"type":"subscribe","events":[],"coefficients":1}"#).0 == .badRequest)
        #expect(code(#"{"type":"subscribe","id":true,"events":[]}"#).0 == .badRequest)
        #expect(code(#"{"type":"subscribe","id":1.5,"events":[]}"#).0 == .badRequest)
        #expect(code(#"{"type":5}"#).0 == .badRequest)
    }
}

struct SubscriptionTests {
    let known: Set<String> = ["blink", "smile", "winkLeft"]

    @Test func defaultWantsEveryEventButNoCoefficients() {
        let s = Subscription()
        #expect(s.wants(event: "smile") && s.wants(event: "anything"))
        #expect(!s.coefficients)
    }

    @Test func subscribeFiltersAndEchoesID() throws {
        var s = Subscription()
        let ok = try s.apply(id: 9, events: ["smile"], coefficients: true, knownEvents: known)
        #expect(ok == OKLine(id: 9))
        #expect(s.wants(event: "smile") && !s.wants(event: "blink"))
        #expect(s.coefficients)
    }

    @Test func unknownEventIsRefusedAndChangesNothing() {
        var s = Subscription()
        #expect(throws: ProtocolError.self) {
            try s.apply(id: 2, events: ["smile", "frown"], coefficients: true, knownEvents: known)
        }
        #expect(s == Subscription())
        do {
            _ = try s.apply(id: 2, events: ["frown"], coefficients: false, knownEvents: known)
        } catch let error as ProtocolError {
            #expect(error.code == .unknownEvent && error.id == 2 && error.message.contains("frown"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}

extension SubscriptionTests {
    @Test func subscribeWithoutEventsWantsEveryEventWithCoefficients() throws {
        var s = Subscription(events: ["smile"])
        _ = try s.apply(id: nil, events: nil, coefficients: true, knownEvents: known)
        #expect(s.wants(event: "blink") && s.wants(event: "aRowAddedByAReload") && s.coefficients)
    }

    /// Issue 15: `unknown_event` names every unknown name, once each, in the request's order.
    @Test func unknownEventNamesEveryUnknownName() {
        var s = Subscription()
        do {
            _ = try s.apply(
                id: 3, events: ["frown", "smile", "wave", "frown"], coefficients: false, knownEvents: known)
            Issue.record("expected unknown_event")
        } catch let error as ProtocolError {
            #expect(error.code == .unknownEvent && error.id == 3)
            #expect(error.message.hasPrefix("unknown events 'frown', 'wave'; known: "), "\(error.message)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}

struct BoundedLineQueueTests {
    @Test func dropsOldestAndCounts() {
        var q = BoundedLineQueue(capacity: 3)
        for i in 0..<1000 { q.push([UInt8(i % 256)]) }
        #expect(q.count == 3)
        #expect(q.takeDroppedCount() == 997)
        #expect(q.takeDroppedCount() == 0)
        #expect(q.popFirst() == [UInt8(997 % 256)])
        #expect(q.popFirst() == [UInt8(998 % 256)])
        #expect(q.popFirst() == [UInt8(999 % 256)])
        #expect(q.popFirst() == nil)
    }

    /// A helper's finding: a slow client lost the `analyzers` line of a reload (and its `reload_ok`) like any
    /// other line, and read rows against the old table without a sign. Kept lines stay; the oldest other line
    /// goes instead, and only a queue of nothing but kept lines drops a kept one.
    @Test func keptLinesOutliveTheLinesAroundThem() {
        var q = BoundedLineQueue(capacity: 3)
        q.push([1])
        q.push([100], keep: true)
        for i: UInt8 in 2...6 { q.push([i]) }
        #expect(q.takeDroppedCount() == 4)
        #expect([q.popFirst(), q.popFirst(), q.popFirst(), q.popFirst()] == [[100], [5], [6], nil])
        var kept = BoundedLineQueue(capacity: 2)
        for i: UInt8 in 1...3 { kept.push([i], keep: true) }
        #expect(kept.takeDroppedCount() == 1)
        #expect([kept.popFirst(), kept.popFirst()] == [[2], [3]])
    }
}

struct ServerLineTests {
    private func object(_ value: some Encodable) throws -> NSDictionary {
        let data = try JSONEncoder().encode(value)
        return try #require(JSONSerialization.jsonObject(with: data) as? NSDictionary)
    }

    @Test func linesHaveTheSpecFields() throws {
        #expect(
            try object(HelloLine(events: ["blink"])) == [
                "type": "hello", "protocol": "winkd", "version": 1, "events": ["blink"],
            ])
        #expect(try object(OKLine(id: 1)) == ["type": "ok", "id": 1])
        #expect(
            try object(ErrorLine(id: 1, code: "unknown_event", message: "m"))
                == ["type": "error", "id": 1, "code": "unknown_event", "message": "m"])
        #expect(try object(DroppedLine(count: 5)) == ["type": "dropped", "count": 5])
        #expect(try object(ByeLine(reason: "end_of_input")) == ["type": "bye", "reason": "end_of_input"])
        #expect(
            try object(StatusLine(state: .sourceOpened, source: "/dev/video0"))
                == ["type": "status", "state": "source_opened", "source": "/dev/video0"])
        #expect(try object(HeartbeatLine(time: 1.5)) == ["type": "heartbeat", "time": 1.5])
    }

    /// The answer to a status request: the broadcast line's fields plus `id`, `clients` and `fps`.
    @Test func statusAnswerHasIDClientsAndFPS() throws {
        #expect(
            try object(StatusLine(answering: 2, state: .idle, source: nil, clients: 1, fps: 0))
                == ["type": "status", "id": 2, "state": "idle", "clients": 1, "fps": 0])
        let decoded = try JSONDecoder().decode(
            StatusLine.self, from: Data(#"{"type":"status","state":"source_opened"}"#.utf8))
        #expect(decoded.id == nil && decoded.clients == nil && decoded.fps == nil)
    }
}

struct EventSocketPathTests {
    @Test func resolutionOrder() {
        #expect(
            EventSocketPath.default(environment: ["WINK_SOCKET": "/tmp/w.sock", "XDG_RUNTIME_DIR": "/run/user/1000"])
                == "/tmp/w.sock")
        #expect(
            EventSocketPath.default(environment: ["WINK_SOCKET": "", "XDG_RUNTIME_DIR": "/run/user/1000"])
                == "/run/user/1000/winkd/events.sock")
        #expect(EventSocketPath.default(environment: ["XDG_RUNTIME_DIR": "relative"]) == "/run/winkd/events.sock")
        #expect(EventSocketPath.default(environment: [:]) == "/run/winkd/events.sock")
        #expect(EventSocketPath.maximumLength == 107)
    }
}
