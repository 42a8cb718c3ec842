import EventServer
import Foundation
import WinkCore
import WinkDaemon

/// `winkctl events`: connects to winkd's event socket and prints its lines (NDJSON, exactly as received,
/// starting with the `hello`) to stdout, one write and flush per line, until interrupted, a `bye` line,
/// or `--count N` event lines. A `subscribe` goes first (every event unless `--events`; coefficients with
/// `--coefficients`; its `ok` reply is not printed). Exit 0 at `bye` (a line on stderr if it came before N
/// events), at N events, or when stdout is closed; 69 with one stderr line when no winkd listens or the
/// connection ends without `bye`; 64 for an event name winkd does not know.
///
/// `--latency`: for every `event` and `coefficients` line, the delay from the frame's capture to the line's
/// arrival, `CLOCK_MONOTONIC` now minus the line's `t_mono_ns`. At the end (count reached, `bye`, end of
/// connection, or SIGINT, which then exits 130) one summary line goes to **stderr**, so that stdout stays
/// pure NDJSON: `latency: lines=N p50=A ms p99=B ms max=C ms` (nearest-rank percentiles, 2 decimals).
enum EventsCommand {
    static let command = WinkctlMain.Command(
        spec: CommandSpec(
            name: "events",
            summary: "print winkd's lines (NDJSON, from hello on) as they come",
            options: [
                .clientSocket,
                OptionSpec("--events", .text("NAME,..."), "subscribe to these events only", default: "every event"),
                OptionSpec("--coefficients", "also subscribe to the coefficient lines"),
                OptionSpec("--count", .text("N"), "end after N event lines"),
                OptionSpec("--latency", "measure frame-to-line latency; a summary line on stderr at the end"),
            ]),
        run: run)

    static func run(_ args: inout Arguments) throws -> ExitCode {
        let socket = try args.option("--socket") ?? EventSocketPath.default()
        let names = try args.option("--events").map { list in
            list.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        }
        if let names, names.allSatisfy(\.isEmpty) {
            throw UsageError("--events needs at least one event name, e.g. winkLeft,smile")
        }
        // A stray comma (`smile,`) was dropped without a word; it may be a name left out.
        if let names, names.contains(where: \.isEmpty) {
            throw UsageError("--events: an empty name in '\(names.joined(separator: ","))' (a stray comma?)")
        }
        let coefficients = args.flag("--coefficients")
        let limit: Int? = try args.number("--count", in: 1...1_000_000_000)
        let measure = args.flag("--latency")
        try args.finish()

        let client = try EventClient(path: socket)
        let offered = client.hello.events
        let unknown = (names ?? []).filter { !offered.contains($0) }
        if !unknown.isEmpty {
            throw UsageError(
                "events: winkd at \(socket) has no event \(unknown.map { "'\($0)'" }.joined(separator: ", "))"
                    + "; it offers \(offered.joined(separator: ","))")
        }
        // Without --events: every event, also those a reload adds (a subscribe without "events"). Always sent:
        // a subscribed client is a listener at once, so winkd starts its source without waiting 0.25 s.
        try client.subscribe(events: names, coefficients: coefficients)
        guard measure else { return try relay(client, socket: socket, limit: limit, latency: nil, write: writeLine) }
        let latency = LatencyRecorder()
        // SIGINT: print the summary, then exit 130 (128 + SIGINT) as an interrupted command does.
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler {
            writeAll(latency.summary() + "\n", to: STDERR_FILENO)
            exit(130)
        }
        interrupt.resume()
        defer { writeAll(latency.summary() + "\n", to: STDERR_FILENO) }
        return try relay(client, socket: socket, limit: limit, latency: latency, write: writeLine)
    }

    /// Copies the client's lines to `write` (the hello first) until `bye`, `limit` event lines, or `write`
    /// returning false; records each event/coefficients line's latency in `latency`.
    /// - Throws: `EventServerError.noDaemon` when the connection ends without `bye`; what `write` throws.
    static func relay(
        _ client: EventClient, socket: String, limit: Int?, latency: LatencyRecorder?,
        write: (String) throws -> Bool
    ) throws -> ExitCode {
        guard try write(client.helloLine) else { return .ok }
        var printed = 0
        var lastType: String?
        while let line = try client.nextLine() {
            let now = SystemClock().nanoseconds()
            guard try write(line) else { return .ok }
            lastType = EventClient.type(of: line)
            if let latency, lastType == "event" || lastType == "coefficients",
                let captured = LatencyRecorder.captureNanoseconds(in: line)
            {
                latency.add(milliseconds: (Double(now) - Double(captured)) / 1e6)
            }
            if let limit, lastType == "event" {
                printed += 1
                if printed >= limit { return .ok }
            }
        }
        if lastType == "bye" {
            // A normal end (0), but short of what --count asked for: said, so a script does not take 3 lines
            // for the 10 it wanted without a word.
            if let limit, printed < limit {
                printError("winkctl: events: winkd said bye after \(printed) of the \(limit) events asked for")
            }
            return .ok
        }
        throw EventServerError(.noDaemon, subject: socket, reason: "winkd closed the connection without a bye")
    }

    /// Writes `line` and a newline to stdout with write(2) (unbuffered, so each line is flushed).
    /// Returns false when stdout is closed (EPIPE; SIGPIPE is ignored by winkctl).
    /// - Throws: `StandardOutputError` (74) for any other failure: a full disk lost the lines without a word
    ///   and exited 0.
    private static func writeLine(_ line: String) throws -> Bool {
        guard let failure = writeAll(line + "\n", to: STDOUT_FILENO) else { return true }
        if failure == EPIPE { return false }
        throw StandardOutputError(code: failure)
    }
}

/// Capture-to-arrival latencies of event lines (milliseconds). Thread-safe (a lock): the SIGINT handler
/// reads it from another thread.
final class LatencyRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var stats = SampleStats(capacity: 4096)

    func add(milliseconds: Double) { lock.withLock { stats.add(milliseconds) } }

    /// `latency: lines=N p50=A ms p99=B ms max=C ms`.
    func summary() -> String {
        lock.withLock {
            String(
                format: "latency: lines=%d p50=%.2f ms p99=%.2f ms max=%.2f ms", stats.count,
                stats.percentile(50), stats.percentile(99), stats.maximum)
        }
    }

    /// The value of the top-level `t_mono_ns` key of a JSON line, or nil when it has none.
    static func captureNanoseconds(in line: String) -> UInt64? {
        struct Stamped: Decodable {
            var tMonoNs: UInt64?
            enum CodingKeys: String, CodingKey { case tMonoNs = "t_mono_ns" }
        }
        return (try? JSONDecoder().decode(Stamped.self, from: Data(line.utf8)))?.tMonoNs
    }
}
