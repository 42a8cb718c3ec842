import Foundation

/// The result of waiting for one line.
public enum LineRead: Equatable, Sendable {
    /// A complete line, without its newline.
    case line(String)
    /// Nothing arrived within the timeout (or a signal interrupted the wait).
    case timeout
    /// The peer closed the connection (EOF); a partial last line is dropped.
    case closed
}

/// One connection that yields NDJSON lines: the small seam the input client reads the event socket
/// through, so the lead can put the shared EventServer client behind it later.
public protocol EventLineConnection: AnyObject {
    /// Waits at most `timeout` seconds for the next line.
    /// - Throws: `InputError.socket` on a read error or a line longer than `UnixSocketConnection.maxLine`.
    func readLine(timeout: Double) throws -> LineRead
    /// Sends one line (a newline is appended).
    /// - Throws: `InputError.socket` when the write fails.
    func send(_ line: String) throws
    /// Closes the connection. Idempotent.
    func close()
}

/// Opens connections to the event socket.
public protocol EventLineConnector {
    /// The socket path, for messages.
    var path: String { get }
    /// - Throws: `InputError.socket` when nobody listens or the path is unusable.
    func connect() throws -> EventLineConnection
}

/// A `SOCK_STREAM` Unix socket client (unix(7)).
public struct UnixSocketConnector: EventLineConnector {
    public var path: String

    public init(path: String) { self.path = path }

    /// The socket path SPEC.md gives: `$WINK_SOCKET`, else `$XDG_RUNTIME_DIR/winkd/events.sock`, else
    /// `/run/winkd/events.sock`. Empty variables count as unset.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = environment["WINK_SOCKET"], !path.isEmpty { return path }
        if let dir = environment["XDG_RUNTIME_DIR"], !dir.isEmpty { return dir + "/winkd/events.sock" }
        return "/run/winkd/events.sock"
    }

    public func connect() throws -> EventLineConnection {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw InputError(.socket, subject: path, reason: "socket path longer than 107 bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw InputError(.socket, subject: path, reason: "socket: \(String(cString: strerror(errno)))") }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            let code = errno
            Glibc.close(fd)
            let reason = code == ENOENT || code == ECONNREFUSED
                ? "no winkd listening (\(String(cString: strerror(code))))" : String(cString: strerror(code))
            throw InputError(.socket, subject: path, reason: reason)
        }
        return UnixSocketConnection(fd: fd, path: path)
    }
}

/// A connected socket read line by line with `poll(2)` and `read(2)`. Not thread-safe.
public final class UnixSocketConnection: EventLineConnection {
    /// Longest line accepted, bytes (SPEC.md caps lines at 8 KiB; this leaves room).
    public static let maxLine = 65_536

    private var fd: Int32
    private let path: String
    private var buffer: [UInt8] = []

    /// Takes ownership of a connected descriptor.
    public init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    public func readLine(timeout: Double) throws -> LineRead {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return .line(line)
            }
            guard buffer.count <= Self.maxLine else {
                throw InputError(.socket, subject: path, reason: "line longer than \(Self.maxLine) bytes")
            }
            guard fd >= 0 else { return .closed }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(max(0, timeout * 1000)))
            if ready < 0 && errno == EINTR || ready == 0 { return .timeout }
            guard ready > 0 else { throw InputError(.socket, subject: path, reason: "poll: \(String(cString: strerror(errno)))") }
            var chunk = [UInt8](repeating: 0, count: 8192)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return .closed }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { return .timeout }
                if errno == ECONNRESET { return .closed }
                throw InputError(.socket, subject: path, reason: "read: \(String(cString: strerror(errno)))")
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    public func send(_ line: String) throws {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                throw InputError(.socket, subject: path, reason: "write: \(String(cString: strerror(errno)))")
            }
            offset += sent
        }
    }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }
}
