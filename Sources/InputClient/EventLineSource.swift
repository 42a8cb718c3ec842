import EventServer
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

/// One connection that yields NDJSON lines, starting with the daemon's `hello`: the small seam the input
/// client reads the event socket through, so tests can script connections. The real one is EventServer's
/// `EventClient` (`UnixSocketConnector`).
public protocol EventLineConnection: AnyObject {
    /// Waits at most `timeout` seconds for the next line.
    /// - Throws: `EventServerError` (or a fake's error) on a read error or an overlong line.
    func readLine(timeout: Double) throws -> LineRead
    /// Sends one line (a newline is appended).
    /// - Throws: `EventServerError` (or a fake's error) when the write fails.
    func send(_ line: String) throws
    /// Closes the connection. Idempotent.
    func close()
}

/// Opens connections to the event socket.
public protocol EventLineConnector {
    /// The socket path, for messages.
    var path: String { get }
    /// Connects and waits at most `helloTimeout` seconds for the daemon's greeting, which the connection
    /// then yields as its first line.
    /// - Throws: `EventServerError` `.protocolViolation` when the peer is not winkd (no `hello` in time, or
    ///   another first line); any other error when nobody listens or the path is unusable.
    func connect(helloTimeout: Double) throws -> EventLineConnection
}

/// Connects with EventServer's `EventClient` (the one client of the event socket, as `winkctl events`
/// uses), to `path`; `EventSocketPath.default()` is the path winkd itself defaults to.
public struct UnixSocketConnector: EventLineConnector {
    /// The event socket's path.
    public var path: String

    /// A connector to the socket at `path`.
    public init(path: String) { self.path = path }

    /// Connects with `EventClient(path:timeout:)`, waiting at most `helloTimeout` seconds for `hello`.
    /// - Throws: `EventServerError` as `EventClient(path:timeout:)`: `.noDaemon`, `.pathTooLong`, `.system`, `.full`
    ///   (exit 69), `.protocolViolation` (65) when no winkd `hello` comes in time.
    public func connect(helloTimeout: Double) throws -> EventLineConnection {
        ClientConnection(try EventClient(path: path, timeout: helloTimeout))
    }

    /// An `EventClient` as an `EventLineConnection`: the `hello` first, then the server's lines. Not
    /// thread-safe.
    private final class ClientConnection: EventLineConnection {
        private let client: EventClient
        private var hello: String?

        init(_ client: EventClient) {
            self.client = client
            hello = client.helloLine
        }

        func readLine(timeout: Double) throws -> LineRead {
            if let line = hello {
                hello = nil
                return .line(line)
            }
            if let line = try client.nextLine(timeout: max(0, timeout)) { return .line(line) }
            return client.isFinished ? .closed : .timeout
        }

        func send(_ line: String) throws { try client.send(line: line) }

        func close() { client.close() }
    }
}
