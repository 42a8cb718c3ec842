import WinkCore
import EventServer
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension EventServer.LogLevel: CaseIterable {
    /// Most severe first.
    public static let allCases: [EventServer.LogLevel] = [.error, .warning, .notice, .info, .debug]

    /// The level's name as `--log-level` and the configuration's `logLevel` take it: "error", "warning",
    /// "notice", "info", "debug" (syslog(3)'s names, without `LOG_`).
    public var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    /// Every name, most severe first.
    public static var names: [String] { allCases.map(\.name) }

    /// The level named `name`; nil for any other text.
    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }
}

/// How winkd writes its log: one line per message on stderr, `winkd: message`, with syslog(3)'s `<N>`
/// priority prefix (which journald reads and strips) unless stderr is a terminal, where it would only be
/// noise; messages less severe than `threshold` are left out.
///
/// Thread-safe: each line is one write(2) to stderr, so lines from different threads never interleave.
public struct DaemonLog: Sendable {
    /// The least severe level written (default `info`: everything but `debug`).
    public var threshold: EventServer.LogLevel
    /// Whether lines carry the `<N>` prefix.
    public var prefixed: Bool

    /// A log writing messages at `threshold` or more severe, with the `<N>` prefix when `prefixed`.
    public init(threshold: EventServer.LogLevel = .info, prefixed: Bool) {
        self.threshold = threshold
        self.prefixed = prefixed
    }

    /// Prefixes unless stderr is a terminal; always under journald (`JOURNAL_STREAM` set, systemd.exec(5)),
    /// even if a terminal is attached too.
    public static func usesPrefixes(stderrIsTerminal: Bool = isatty(STDERR_FILENO) == 1,
                                    environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        environment["JOURNAL_STREAM"] != nil || !stderrIsTerminal
    }

    /// The line for a message (with its newline), or nil when `level` is below the threshold.
    public func line(_ level: EventServer.LogLevel, _ message: String) -> String? {
        guard level.rawValue <= threshold.rawValue else { return nil }
        // One line whatever the message holds (a file or client name with a newline or an escape sequence).
        return (prefixed ? "<\(level.rawValue)>" : "") + "winkd: \(visibleControlCharacters(message))\n"
    }

    /// Writes the message's line to stderr (nothing below the threshold).
    public func write(_ level: EventServer.LogLevel, _ message: String) {
        guard let line = line(level, message) else { return }
        // write(2): a log that cannot be written (a full disk, a closed pipe) loses the line, not the daemon
        // (FileHandle.write trapped, killing winkd for every client).
        writeAll(line, to: STDERR_FILENO)
    }
}

/// The event server's log lines while the daemon starts: held until start-up succeeds, then written in the
/// order they came, before any later line (a client that connected while the model loaded is logged as
/// connected before what it did next); dropped when start-up fails, whose one error line says it all.
/// Thread-safe.
final class StartupLogGate: Sendable {
    private let state = Mutex<(open: Bool, held: [(EventServer.LogLevel, String)])>((false, []))
    private let log: @Sendable (EventServer.LogLevel, String) -> Void

    init(log: @escaping @Sendable (EventServer.LogLevel, String) -> Void) { self.log = log }

    /// Holds the message while closed, else logs it.
    func callAsFunction(_ level: EventServer.LogLevel, _ message: String) {
        let held = state.withLock { state -> Bool in
            if !state.open { state.held.append((level, message)) }
            return !state.open
        }
        if !held { log(level, message) }
    }

    /// Writes the held lines (under the lock, so no later line overtakes them) and lets the next ones through.
    func open() {
        state.withLock { state in
            for (level, message) in state.held { log(level, message) }
            state = (true, [])
        }
    }

    /// Forgets the held lines; later ones stay held (start-up failed).
    func discard() { state.withLock { $0.held = [] } }
}
