import Foundation
import WinkCore

#if canImport(Glibc)
    import Glibc
#endif

/// The client side of the event socket, for `winkctl events` and tests: connects, reads the `hello`,
/// optionally subscribes, then hands out the server's lines one at a time.
///
/// Blocking I/O on one connection; not thread-safe (use one client per thread).
public final class EventClient {
    /// The socket path connected to.
    public let path: String
    /// The server's greeting.
    public let hello: HelloLine
    /// The greeting exactly as received (without newline).
    public let helloLine: String

    private let syscalls: any SocketSyscalls
    private var fd: Int32
    private var splitter = LineSplitter(maximumLineBytes: 1 << 20)
    private var ready: [String] = []
    private var sawBye = false
    private var atEOF = false

    /// What `path` is when it exists but is not a socket ("a regular file", "a directory", ...); nil for a
    /// socket or a path that cannot be examined.
    static func kind(of path: String, syscalls: any SocketSyscalls) -> String? {
        guard let st = try? syscalls.lstat(path) else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFSOCK, S_IFLNK: return nil  // a link is followed by connect: say nothing of its target
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR, S_IFBLK: return "a device"
        default: return "not a socket"
        }
    }

    /// Connects to `path` and reads the `hello` line.
    /// - Parameters:
    ///   - timeout: seconds to wait for the `hello`.
    ///   - syscalls: where the socket calls go; a fake in tests.
    /// - Throws: `EventServerError` `.noDaemon` when nothing listens at `path` (ENOENT, ECONNREFUSED) or
    ///   it is not a socket at all (a regular file, a directory: "not a socket"),
    ///   `.pathTooLong`, `.system(errno:)` for other connect failures (EACCES: the socket's mode keeps us
    ///   out), `.full` when the daemon greets with `too_many_clients`, `.protocolViolation` when the first
    ///   line is not a winkd `hello` or does not come in time.
    public convenience init(
        path: String, timeout: Double = 5, syscalls: any SocketSyscalls = LinuxSocketSyscalls()
    ) throws {
        switch try Self.open(path: path, timeout: timeout, syscalls: syscalls) {
        case .greeted(let greeted):
            self.init(path: path, syscalls: syscalls, greeted: greeted)
        case .full(let message, _):
            throw Self.fullError(path: path, message: message)
        }
    }

    private init(path: String, syscalls: any SocketSyscalls, greeted: Greeted) {
        self.path = path
        self.syscalls = syscalls
        fd = greeted.fd
        helloLine = greeted.line
        hello = greeted.hello
        splitter = greeted.splitter
        ready = greeted.early
        atEOF = greeted.eof
    }

    /// A connection whose `hello` was read, with what came after it in the same reads.
    private struct Greeted {
        var fd: Int32
        var line: String
        var hello: HelloLine
        var splitter: LineSplitter
        var early: [String]
        var eof: Bool
    }

    /// How a daemon greeted: with `hello` (the connection open), or full (the connection closed), with the
    /// `status` line a winkd sends after its refusal (nil from a winkd older than that).
    private enum Opening {
        case greeted(Greeted)
        case full(message: String, stateLine: String?)
    }

    /// Connects and reads the greeting (see `init(path:timeout:syscalls:)` for what is thrown, except
    /// `.full`, which is returned).
    private static func open(path: String, timeout: Double, syscalls: any SocketSyscalls) throws -> Opening {
        guard path.utf8.count <= EventSocketPath.maximumLength else {
            throw EventServerError(
                .pathTooLong, subject: path, reason: "socket path longer than \(EventSocketPath.maximumLength) bytes")
        }
        let fd: Int32
        do {
            fd = try syscalls.connect(path: path)
        } catch {
            switch error.code {
            case ECONNREFUSED, ENOTSOCK, ENOENT, ENOTDIR:
                if let kind = Self.kind(of: path, syscalls: syscalls) {
                    throw EventServerError(
                        .noDaemon, subject: path, reason: "not a socket (\(kind)); give winkd's socket path")
                }
                throw EventServerError(.noDaemon, subject: path, reason: "no winkd listening (is it running?)")
            default:
                throw EventServerError(.system(errno: error.code), subject: path, reason: "cannot connect: \(error)")
            }
        }
        var greeting: String?
        var splitter = LineSplitter(maximumLineBytes: 1 << 20)
        var early: [String] = []
        var eof = false
        let deadline = monotonicSeconds() + timeout
        do {
            greeting = try Self.readLine(
                fd: fd, syscalls: syscalls, splitter: &splitter, queue: &early, deadline: deadline, eof: &eof)
            // A full daemon greets with an error line instead of hello: that is winkd, busy, not another
            // program. Its state follows in the same write.
            if let greeting, let refusal = try? JSONDecoder().decode(ErrorLine.self, from: Data(greeting.utf8)),
               refusal.type == "error", refusal.code == ProtocolError.Code.tooManyClients.rawValue {
                let state = try? Self.readLine(
                    fd: fd, syscalls: syscalls, splitter: &splitter, queue: &early,
                    deadline: min(deadline, monotonicSeconds() + 1), eof: &eof)
                syscalls.close(fd)
                return .full(message: refusal.message, stateLine: state)
            }
        } catch {
            syscalls.close(fd)
            throw error
        }
        guard let greeting, let decoded = try? JSONDecoder().decode(HelloLine.self, from: Data(greeting.utf8)),
            decoded.type == "hello", decoded.protocol == "winkd"
        else {
            syscalls.close(fd)
            throw EventServerError(
                .protocolViolation, subject: path,
                reason: greeting == nil ? "no hello from the server" : "not a winkd hello: \(greeting!.prefix(80))")
        }
        return .greeted(Greeted(fd: fd, line: greeting, hello: decoded, splitter: splitter, early: early, eof: eof))
    }

    private static func fullError(path: String, message: String) -> EventServerError {
        EventServerError(
            .full, subject: path,
            reason: "winkd is full: \(message) (socket.maximumClients); try again when one leaves")
    }

    /// The daemon's state, asked on a connection of its own (`{"type":"status","id":1}`), or, when the
    /// daemon is full, the `status` line it sends with its refusal: a full daemon can still be asked.
    /// - Returns: the status line exactly as received, decoded, and the refusal's message when the daemon
    ///   was full (nil otherwise).
    /// - Throws: as `init(path:timeout:syscalls:)` and `status(timeout:)`; `.full` only when a full daemon
    ///   sent no state (a winkd older than that).
    public static func askStatus(
        path: String, timeout: Double = 5, syscalls: any SocketSyscalls = LinuxSocketSyscalls()
    ) throws -> (line: String, status: StatusLine, full: String?) {
        switch try open(path: path, timeout: timeout, syscalls: syscalls) {
        case .greeted(let greeted):
            let client = EventClient(path: path, syscalls: syscalls, greeted: greeted)
            let answer = try client.status(timeout: timeout)
            return (answer.line, answer.status, nil)
        case .full(let message, let stateLine):
            guard let stateLine,
                let status = try? JSONDecoder().decode(StatusLine.self, from: Data(stateLine.utf8)),
                status.type == "status"
            else { throw fullError(path: path, message: message) }
            return (stateLine, status, message)
        }
    }

    deinit { close() }

    /// True once `nextLine` can only return nil: the connection ended (end of file, reset, or `close()`)
    /// with no line left to hand out, or a `bye` line was returned. While false, a nil from `nextLine`
    /// means its timeout passed.
    public var isFinished: Bool { sawBye || (ready.isEmpty && (atEOF || fd < 0)) }

    /// Closes the connection. Further reads return nil.
    public func close() {
        if fd >= 0 { syscalls.close(fd) }
        fd = -1
    }

    /// Sends `{"type":"subscribe","id":1,"events":events,"coefficients":coefficients}` (without `events`
    /// when nil: every event, including names a reload adds) and waits for the reply. Event and
    /// coefficient lines that arrive before the reply were sent under the old subscription and are
    /// dropped; other lines (status, bye) are kept for `nextLine`.
    /// - Throws: `EventServerError` `.rejected` with the server's error message when it refuses (an unknown
    ///   event name), `.protocolViolation` when no reply comes within `timeout` seconds or the connection
    ///   closes first, `.system(errno:)` when sending fails.
    public func subscribe(events: [String]?, coefficients: Bool, timeout: Double = 5) throws {
        struct Request: Encodable {
            var type = "subscribe"
            var id = 1
            var events: [String]?
            var coefficients: Bool
        }
        let data = try JSONEncoder().encode(Request(events: events, coefficients: coefficients))
        try send(line: String(decoding: data, as: UTF8.self))
        _ = try awaitReply(to: "subscribe", timeout: timeout) { type, _ in type == "ok" }
    }

    /// Sends `{"type":"status","id":1}` and waits for the daemon's answer: a `status` line with that `id`.
    /// Other lines that arrive meanwhile (events, broadcast status lines) are kept for `nextLine`.
    /// - Throws: `EventServerError` `.rejected` when the daemon refuses the request (one older than the
    ///   `status` request answers `unknown_type`), `.protocolViolation` when no answer comes within `timeout`
    ///   seconds or the connection closes first, `.system(errno:)` when sending fails.
    public func status(timeout: Double = 5) throws -> (line: String, status: StatusLine) {
        try send(line: #"{"type":"status","id":1}"#)
        var answer: StatusLine?
        let line = try awaitReply(to: "status", timeout: timeout, keepOthers: true) { type, line in
            guard type == "status", let decoded = try? JSONDecoder().decode(StatusLine.self, from: Data(line.utf8)),
                decoded.id == 1
            else { return false }
            answer = decoded
            return true
        }
        return (line, answer!)
    }

    /// Reads until the reply to a request: a line `isReply` accepts, or an `error` line (thrown as
    /// `.rejected`). Lines before it are kept for `nextLine`, except event and coefficient lines unless
    /// `keepOthers`. Returns the reply line.
    private func awaitReply(
        to request: String, timeout: Double, keepOthers: Bool = false,
        isReply: (String?, String) -> Bool
    ) throws -> String {
        let deadline = monotonicSeconds() + timeout
        var kept: [String] = []
        while true {
            let line: String
            if !ready.isEmpty {
                line = ready.removeFirst()
            } else {
                guard
                    let next = try Self.readLine(
                        fd: fd, syscalls: syscalls, splitter: &splitter, queue: &ready,
                        deadline: deadline, eof: &atEOF)
                else {
                    throw EventServerError(.protocolViolation, subject: path, reason: "no reply to \(request)")
                }
                line = next
            }
            let type = Self.type(of: line)
            if type == "error" {
                ready = kept + ready
                let message = (try? JSONDecoder().decode(ErrorLine.self, from: Data(line.utf8)))?.message ?? line
                throw EventServerError(.rejected, subject: path, reason: "\(request) refused: \(message)")
            }
            if isReply(type, line) {
                ready = kept + ready
                return line
            }
            if keepOthers || (type != "event" && type != "coefficients") { kept.append(line) }
        }
    }

    /// shutdown(SHUT_WR): tells the server we send nothing more while still reading. For tests.
    func shutDownSending() -> Bool { (try? syscalls.shutDownSending(fd)) != nil }

    /// Sends one raw line (a newline is appended).
    /// - Throws: `EventServerError` `.system(errno:)` when the connection is closed.
    public func send(line: String) throws {
        try send(bytes: Array(line.utf8) + [0x0A])
    }

    /// Sends bytes as they are (no newline added): for tests of framing.
    func send(bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            var fds = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)]
            _ = try? syscalls.poll(&fds, timeoutMilliseconds: 1000)
            do {
                offset += try bytes.withUnsafeBytes {
                    try syscalls.send(fd, UnsafeRawBufferPointer(rebasing: $0[offset...]))
                }
            } catch let error as Errno {
                throw EventServerError(.system(errno: error.code), subject: path, reason: "cannot send: \(error)")
            }
        }
    }

    /// The next line from the server (without its newline), exactly as received; nil at end of
    /// connection, after a `bye` line was returned, or when `timeout` seconds pass with no line
    /// (nil timeout: wait as long as it takes).
    /// - Throws: `EventServerError` `.protocolViolation` for a line over 1 MiB, `.system(errno:)` when
    ///   reading fails (ECONNRESET).
    public func nextLine(timeout: Double? = nil) throws -> String? {
        if sawBye { return nil }
        let line: String?
        if !ready.isEmpty {
            line = ready.removeFirst()
        } else if atEOF || fd < 0 {
            line = nil
        } else {
            line = try Self.readLine(
                fd: fd, syscalls: syscalls, splitter: &splitter, queue: &ready,
                deadline: timeout.map { monotonicSeconds() + $0 }, eof: &atEOF)
        }
        if let line, line.contains("\"bye\""), Self.type(of: line) == "bye" { sawBye = true }
        return line
    }

    /// The `type` field of a line, or nil if it has none.
    public static func type(of line: String) -> String? {
        struct Typed: Decodable { var type: String? }
        return (try? JSONDecoder().decode(Typed.self, from: Data(line.utf8)))?.type
    }

    /// Reads until one line is complete (extra lines go to `queue`); nil at EOF (setting `eof`) or at the
    /// deadline.
    private static func readLine(
        fd: Int32, syscalls: any SocketSyscalls, splitter: inout LineSplitter, queue: inout [String],
        deadline: Double?, eof: inout Bool
    ) throws -> String? {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            if !queue.isEmpty { return queue.removeFirst() }
            let waitMs: Int32
            if let deadline {
                let remaining = deadline - monotonicSeconds()
                if remaining <= 0 { return nil }
                waitMs = Int32(min(remaining * 1000, 60_000).rounded(.up))
            } else {
                waitMs = -1
            }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            let ready: Int
            do {
                ready = try syscalls.poll(&fds, timeoutMilliseconds: waitMs)
            } catch {
                throw EventServerError(.system(errno: error.code), subject: "socket", reason: "poll: \(error)")
            }
            if ready == 0 { continue }
            let count: Int?
            do {
                count = try buffer.withUnsafeMutableBytes { try syscalls.read(fd, into: $0) }
            } catch let error as Errno {
                if error.code == ECONNRESET {
                    eof = true
                    return nil
                }
                throw EventServerError(.system(errno: error.code), subject: "socket", reason: "read: \(error)")
            }
            guard let count else { continue }
            if count == 0 {
                eof = true
                return queue.isEmpty ? nil : queue.removeFirst()
            }
            for item in splitter.append(buffer[0..<count]) {
                switch item {
                case .line(let bytes): queue.append(String(decoding: bytes, as: UTF8.self))
                case .tooLong:
                    throw EventServerError(
                        .protocolViolation, subject: "socket", reason: "the server sent a line over 1 MiB")
                }
            }
        }
    }
}
