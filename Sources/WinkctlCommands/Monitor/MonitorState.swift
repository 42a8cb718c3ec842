import EventServer
import Expressions
import Foundation
import WinkCore

/// What `winkctl monitor` knows about the daemon, built from the socket's lines: the analyzer table, each
/// row's value and state, the coefficients, the last events, the source's state, frames per second and
/// frame-to-line latency. A value type with no I/O: the reader thread applies lines to it, the drawing
/// thread takes copies.
struct MonitorState {
    /// One event in the list.
    struct EventEntry: Equatable {
        var time: Double
        var event: String
        var phase: String?
        var value: Double?
        var duration: Double?
    }

    /// How the connection ended.
    enum Ending: Equatable {
        /// The daemon said `bye` with this reason.
        case bye(String)
        /// The connection ended (or failed) without a `bye`.
        case lost(String)
    }

    /// The most events kept (more than any screen shows).
    static let eventCapacity = 100
    /// Seconds a row stays highlighted after it fired (`began` or `occurred`).
    static let flashSeconds = 0.6

    var socket: String
    /// The source and its state, from the last `status` line about the source.
    var source: String?
    var sourceState: String?
    var statusMessage: String?
    /// The last status about something else (a reload, the overlay output): its state, shown beside the
    /// source's. A reload's line names the configuration file as its `source`, which took the title's place.
    var otherState: String?
    /// Clients connected, from an answer to a `status` request (a daemon that answers them).
    var clients: Int?
    /// The analyzer table (`analyzers` line), in table order.
    var table: [AnalyzerRow] = []
    /// Set when winkd said its table is too large to describe (`AnalyzersOmittedLine`): no bars then.
    var tableOmitted: AnalyzersOmittedLine?
    /// The last `rows` line's rows, by event name.
    var rows: [String: RowsLine.Row] = [:]
    /// Whether a face is present, from the last `rows` line (nil before the first).
    var face: Bool?
    var frame: Int?
    var time: Double?
    /// The last `coefficients` line's values (ARKit names), with its `headPose` in degrees as `headYaw`,
    /// `headPitch` and `headRoll`.
    var coefficients: [String: Double] = [:]
    /// Newest first.
    var events: [EventEntry] = []
    /// Monotonic seconds until which a row is highlighted, by event name.
    var flashes: [String: Double] = [:]
    /// Arrival times (monotonic seconds) of the frames of the last second.
    private var arrivals: [Double] = []
    /// The last frames' capture-to-arrival delays, milliseconds.
    private var latencies: [Double] = []
    var ending: Ending?

    /// The rows shown (`--events`), nil for every row of the table.
    var shownRows: Set<String>?

    init(socket: String, shownRows: Set<String>? = nil) {
        self.socket = socket
        self.shownRows = shownRows
    }

    /// Frames per second over the last second of arrivals as of `now` (0 when none came).
    func framesPerSecond(now: Double) -> Double {
        let recent = arrivals.filter { now - $0 <= 1.0 }
        guard recent.count >= 2, let first = recent.first, let last = recent.last, last > first else {
            return Double(recent.count)
        }
        return Double(recent.count - 1) / (last - first)
    }

    /// Median frame-to-line latency in milliseconds over the last 30 frames, nil before the first.
    var latencyMilliseconds: Double? {
        guard !latencies.isEmpty else { return nil }
        return latencies.sorted()[latencies.count / 2]
    }

    private static let decoder = JSONDecoder()

    private struct Typed: Decodable { var type: String? }
    /// A `status` line, decoded tolerantly: a broadcast change, or the answer to a request (with `id`).
    private struct Status: Decodable {
        var state: String?
        var source: String?
        var message: String?
        var clients: Int?
    }
    private struct Event: Decodable {
        var event: String
        var phase: String?
        var time: Double
        var value: Double?
        var duration: Double?
    }
    private struct Coefficients: Decodable {
        var values: [String: Double]
        var headPose: HeadPose?
    }
    private struct Bye: Decodable { var reason: String? }

    /// Applies one line from the daemon. `now`: monotonic seconds; `nowNanoseconds`: `CLOCK_MONOTONIC` now,
    /// for the latency of lines stamped with `t_mono_ns`.
    /// - Returns: whether the screen should be redrawn for it (`coefficients` lines come just before their
    ///   frame's `rows` line, which redraws).
    @discardableResult
    mutating func apply(_ line: String, now: Double, nowNanoseconds: UInt64) -> Bool {
        let data = Data(line.utf8)
        guard let type = try? Self.decoder.decode(Typed.self, from: data).type else { return false }
        switch type {
        case "rows":
            guard let rows = try? Self.decoder.decode(RowsLine.self, from: data) else { return false }
            for row in rows.rows { self.rows[row.event] = row }
            face = rows.face
            frame = rows.frame
            time = rows.time
            arrivals.removeAll { now - $0 > 1.0 }
            arrivals.append(now)
            if let stamp = rows.tMonoNs, nowNanoseconds >= stamp {
                if latencies.count >= 30 { latencies.removeFirst() }
                latencies.append(Double(nowNanoseconds - stamp) / 1e6)
            }
        case "coefficients":
            guard let line = try? Self.decoder.decode(Coefficients.self, from: data) else { return false }
            coefficients = line.values
            if let pose = line.headPose {  // shown beside the coefficients, under these names
                coefficients["headYaw"] = Double(pose.yaw)
                coefficients["headPitch"] = Double(pose.pitch)
                coefficients["headRoll"] = Double(pose.roll)
            }
            return false
        case "event":
            guard let e = try? Self.decoder.decode(Event.self, from: data) else { return false }
            events.insert(EventEntry(time: e.time, event: e.event, phase: e.phase, value: e.value,
                                     duration: e.duration), at: 0)
            if events.count > Self.eventCapacity { events.removeLast() }
            if e.phase == "began" || e.phase == "occurred" { flashes[e.event] = now + Self.flashSeconds }
        case "analyzers":
            if let omitted = try? Self.decoder.decode(AnalyzersOmittedLine.self, from: data) {
                tableOmitted = omitted
                table = []
                rows = [:]
                return true
            }
            guard let line = try? Self.decoder.decode(AnalyzersLine<AnalyzerRow>.self, from: data) else { return false }
            tableOmitted = nil
            table = line.rows.filter { row in shownRows?.contains(row.event) ?? true }
            rows = rows.filter { name, _ in line.rows.contains { $0.event == name } }
        case "status":
            guard let status = try? Self.decoder.decode(Status.self, from: data) else { return false }
            if let state = status.state, StatusState(rawValue: state).map({ !$0.concernsTheSource }) ?? false {
                otherState = state
            } else {
                if let state = status.state {
                    sourceState = state
                    statusMessage = status.message
                }
                if let source = status.source { self.source = source }
            }
            if let clients = status.clients { self.clients = clients }
        case "bye":
            ending = .bye((try? Self.decoder.decode(Bye.self, from: data))?.reason ?? "no reason given")
        default:
            return false
        }
        return true
    }

    /// Empties the event list (key `c`).
    mutating func clearEvents() {
        events.removeAll()
        flashes.removeAll()
    }
}
