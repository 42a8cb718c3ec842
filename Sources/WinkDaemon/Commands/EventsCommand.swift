import EventServer
import Foundation
import WinkCore

/// `winkctl events`: connects to winkd's event socket and prints its lines (NDJSON, exactly as received,
/// starting with the `hello`) to stdout, one write and flush per line, until interrupted, a `bye` line,
/// or `--count N` event lines. `--events`/`--coefficients` send a `subscribe` first (its `ok` reply is not
/// printed). Exit 0 at `bye`, at N events, or when stdout is closed; 69 with one stderr line when no winkd
/// listens or the connection ends without `bye`; 64 for an event name winkd does not know.
enum EventsCommand {
    static let command = WinkctlMain.Command(
        synopsis: "events [--socket PATH] [--events NAME,...] [--coefficients] [--count N]",
        run: run)

    static func run(_ args: inout Arguments) throws -> ExitCode {
        let socket = try args.option("--socket") ?? EventSocketPath.default()
        let names = try args.option("--events").map { list in
            list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let coefficients = args.flag("--coefficients")
        let limit: Int? = try args.number("--count", in: 1...1_000_000_000)
        try args.finish()

        let client = try EventClient(path: socket)
        if names != nil || coefficients {
            let offered = client.hello.events
            let wanted = names ?? offered
            if let unknown = wanted.first(where: { !offered.contains($0) }) {
                throw UsageError("events: winkd at \(socket) has no event '\(unknown)'; it offers \(offered.joined(separator: ","))")
            }
            try client.subscribe(events: wanted, coefficients: coefficients)
        }
        guard writeLine(client.helloLine) else { return .ok }
        var printed = 0
        var lastType: String?
        while let line = try client.nextLine() {
            guard writeLine(line) else { return .ok }
            lastType = EventClient.type(of: line)
            if let limit, lastType == "event" {
                printed += 1
                if printed >= limit { return .ok }
            }
        }
        if lastType == "bye" { return .ok }
        throw EventServerError(.noDaemon, path: socket, reason: "winkd closed the connection without a bye")
    }

    /// Writes `line` and a newline to stdout with write(2) (unbuffered, so each line is flushed).
    /// Returns false when stdout is closed (EPIPE; SIGPIPE is ignored by winkctl).
    private static func writeLine(_ line: String) -> Bool {
        let bytes = Array(line.utf8) + [0x0A]
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }
}
