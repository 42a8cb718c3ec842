import EventServer
import Foundation
import WinkCore

/// How one connection to the event socket ended.
public enum ConnectionEnd: Equatable, Sendable {
    /// Nobody listened, or the path is unusable; the message names the path.
    case connectFailed(String)
    /// The first line was not a winkd `hello`.
    case notWinkd(String)
    /// The daemon said `bye` (with its reason).
    case bye(String)
    /// The connection closed (EOF) or broke.
    case closed
    /// No line (not even a heartbeat) came for this many seconds: a stalled or frozen daemon. Keys let up.
    case silent(Double)
    /// `shouldStop` returned true (a signal).
    case stopped
    /// The map names events the daemon does not offer (its `hello`) at the session's first connection: a
    /// typo or a row the daemon's configuration lacks. The session ends without reconnecting; `winkctl
    /// input` exits 78 naming them. At a later connection (winkd restarted with another configuration) the
    /// session goes on instead, as after a reload: those mappings stay idle until winkd offers them again.
    case unknownEvents([String], offered: [String])
}

/// Drives a `MappingEngine` from the event socket: connect, read `hello`, subscribe to the map's events,
/// feed event lines, tick event time between lines, and on any end of the stream let up every key
/// before anything else. `run(reconnect: true)` then reconnects with backoff (0.5 s doubling to 5 s).
/// After winkd says `reload_ok` the session subscribes again, so that a reloaded configuration without an
/// event the map uses is said at once (one log line naming it; those mappings stay idle until a later
/// configuration offers it again, the others go on), not first at the next connection.
///
/// Event time between lines is estimated as the last event's `time` plus the `clock` time since that
/// line arrived. Not thread-safe: run it on one thread.
public final class InputSession {
    /// The engine the session feeds; its injector receives every action.
    public let engine: MappingEngine
    private let connector: EventLineConnector
    private let clock: MonotonicClock
    private let sleep: (Double) -> Void
    private let log: (String) -> Void
    private let shouldStop: () -> Bool
    private let decoder = JSONDecoder()

    /// Seconds between ticks while no line arrives.
    public var tickInterval = 0.02
    /// Seconds to wait for `hello` after connecting.
    public var helloTimeout = 5.0
    /// Seconds without any line after which the daemon counts as stalled: the connection is dropped and every
    /// key let up (then reconnected as after any end). winkd sends a `heartbeat` after 10 s without another
    /// line, so 25 s is two and a half of them. A frozen daemon (SIGSTOP, a hung machine) held keys down and
    /// kept `repeat` tapping forever.
    public var silenceLimit = 25.0
    /// First and largest reconnect delay, seconds.
    public var backoff: (first: Double, max: Double) = (0.5, 5.0)
    /// Whether a connection has been greeted and subscribed to (the map's names were checked once).
    private var hasSubscribed = false
    /// Whether the last log line said the connection was lost or could not be made (so the next subscription
    /// says "connected", or "connected again" after an earlier one).
    private var saidLost = false

    /// - Parameters:
    ///   - sleep: waits the given seconds (the caller makes it return early on a stop request).
    ///   - log: receives one line per notable happening (reconnects, daemon errors), without newline.
    ///   - shouldStop: polled between lines; true ends the session (keys released).
    public init(engine: MappingEngine, connector: EventLineConnector, clock: MonotonicClock = SystemClock(),
                sleep: @escaping (Double) -> Void, log: @escaping (String) -> Void,
                shouldStop: @escaping () -> Bool = { false }) {
        self.engine = engine
        self.connector = connector
        self.clock = clock
        self.sleep = sleep
        self.log = log
        self.shouldStop = shouldStop
    }

    /// Serves connections until stopped; with `reconnect` false, returns after the first connection ends.
    /// Returns how the last connection ended.
    @discardableResult
    public func run(reconnect: Bool) -> ConnectionEnd {
        var delay = backoff.first
        while true {
            let (end, greeted) = runOnce()
            if !reconnect || end == .stopped || shouldStop() { return end }
            if case .unknownEvents = end { return end }
            if greeted { delay = backoff.first }
            log("\(connector.path): \(Self.describe(end, path: connector.path)); reconnecting in \(delay) s")
            saidLost = true
            sleep(delay)
            if shouldStop() { return .stopped }
            delay = min(delay * 2, backoff.max)
        }
    }

    /// One connection, start to end. Every held key is released before this returns.
    /// - Returns: how it ended, and whether the daemon said hello.
    public func runOnce() -> (end: ConnectionEnd, greeted: Bool) {
        let connection: EventLineConnection
        do {
            connection = try connector.connect(helloTimeout: helloTimeout)
        } catch let error as EventServerError where error.code == .protocolViolation {
            engine.releaseAll()
            return (.notWinkd("no winkd hello"), false)
        } catch {
            engine.releaseAll()
            return (.connectFailed("\(error)"), false)
        }
        defer {
            engine.releaseAll()
            connection.close()
        }
        do {
            guard case .line(let first) = try connection.readLine(timeout: helloTimeout),
                  let hello = try? decoder.decode(Hello.self, from: Data(first.utf8)),
                  hello.type == "hello", (hello.protocol ?? "winkd") == "winkd" else {
                return (.notWinkd("no winkd hello"), false)
            }
            var names = engine.map.eventNames
            if let offered = hello.events {
                let unknown = names.filter { !offered.contains($0) }
                if !unknown.isEmpty {
                    if !hasSubscribed { return (.unknownEvents(unknown, offered: offered), true) }
                    // winkd came back with another configuration: as after a reload, the rest go on.
                    log("\(connector.path): winkd's configuration lacks events this map uses ("
                        + unknown.joined(separator: ", ") + "); those mappings stay idle until it offers them again")
                    names = names.filter { offered.contains($0) }
                }
            }
            try subscribe(connection, names: names)
            if saidLost {
                log("\(connector.path): " + (hasSubscribed ? "connected again" : "connected"))
                saidLost = false
            }
            hasSubscribed = true
            return (try serve(connection), true)
        } catch {
            log("\(error)")
            return (.closed, false)
        }
    }

    /// The request id of the subscription sent at connection (1) and after each reload (2).
    private static let firstSubscription = 1, resubscription = 2

    /// Subscribes to `names` (by default every event the map uses).
    private func subscribe(_ connection: EventLineConnection, id: Int = firstSubscription, names: [String]? = nil)
        throws {
        let names = names ?? engine.map.eventNames
        let line = try LineEncoder().string(Subscribe(id: id, events: names))
        try connection.send(line)
    }

    private func serve(_ connection: EventLineConnection) throws -> ConnectionEnd {
        var last: (time: Double, receivedNs: UInt64)?
        var heardNs = clock.nanoseconds()
        while true {
            if shouldStop() { return .stopped }
            let read = try connection.readLine(timeout: tickInterval)
            if case .line = read { heardNs = clock.nanoseconds() }
            switch read {
            case .closed:
                return .closed
            case .timeout:
                if Double(clock.nanoseconds() &- heardNs) / 1e9 >= silenceLimit { return .silent(silenceLimit) }
                if let last {
                    let elapsed = Double(clock.nanoseconds() &- last.receivedNs) / 1e9
                    engine.tick(time: last.time + elapsed)
                }
            case .line(let text):
                let data = Data(text.utf8)
                guard let header = try? decoder.decode(Header.self, from: data) else {
                    log("\(connector.path): ignoring a line that is not JSON")
                    continue
                }
                switch header.type {
                case "event":
                    guard let event = try? decoder.decode(ExpressionEvent.self, from: data) else {
                        log("\(connector.path): ignoring a malformed event line")
                        continue
                    }
                    engine.handle(event)
                    last = (event.time, clock.nanoseconds())
                case "bye":
                    return .bye(header.reason ?? "")
                case "status" where header.state == "reload_ok":
                    try subscribe(connection, id: Self.resubscription)
                case "error" where header.code == "unknown_event" && header.id == Self.resubscription:
                    // The first subscription stays in force: the other mappings go on.
                    log("\(connector.path): winkd's reloaded configuration lacks events this map uses "
                        + "(\(header.message ?? "?")); those mappings stay idle until it offers them again")
                case "error":
                    log("\(connector.path): daemon error: \(header.message ?? header.code ?? "?")")
                default:
                    continue
                }
            }
        }
    }

    /// How a connection ended, for a log line that already names `path` (a message that begins with it, as
    /// the connector's do, is not given it twice).
    static func describe(_ end: ConnectionEnd, path: String) -> String {
        switch end {
        case .connectFailed(let message): "cannot connect (\(describeMessage(message, besides: path)))"
        case .notWinkd(let message): "not a winkd socket (\(describeMessage(message, besides: path)))"
        case .bye(let reason): "daemon said bye (\(reason))"
        case .closed: "connection closed"
        case .silent(let seconds): "no line from winkd for \(plainNumber(seconds)) s (stalled?); keys let up"
        case .stopped: "stopped"
        case .unknownEvents(let names, _): "the daemon does not offer \(names.joined(separator: ", "))"
        }
    }

    struct Hello: Decodable {
        var type: String
        var `protocol`: String?
        var version: Int?
        var events: [String]?
    }

    struct Header: Decodable {
        var type: String
        var id: Int?
        var state: String?
        var reason: String?
        var code: String?
        var message: String?
    }

    struct Subscribe: Encodable {
        var type = "subscribe"
        var id: Int
        var events: [String]
        var coefficients = false
    }
}
