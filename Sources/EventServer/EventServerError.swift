import WinkCore

/// Errors of the event socket: binding, accepting, and the client side used by `winkctl`.
public typealias EventServerError = SubjectError<EventServerErrorCode>

/// What went wrong, deciding the exit code; the error's subject is the socket path.
public enum EventServerErrorCode: ExitCodeKind {
    /// The socket path is longer than `sun_path` allows (107 bytes). Exit 64.
    case pathTooLong
    /// Another live winkd is listening on the path. Exit 69.
    case inUse
    /// The path exists and is not a socket. Exit 78.
    case notASocket
    /// A system call failed, with its errno. Exit 69.
    case system(errno: Int32)
    /// No daemon listens at the path (client side). Exit 69.
    case noDaemon
    /// The daemon sent something that is not the winkd protocol (client side). Exit 65.
    case protocolViolation
    /// The daemon serves as many clients as it takes (`socket.maximumClients`) and greeted with
    /// `too_many_clients` instead of `hello` (client side). Exit 69: try again when a client leaves.
    case full
    /// The daemon refused a request, e.g. a subscribe naming an unknown event (client side). Exit 64.
    case rejected
    /// The socket's directory is one another user could replace the socket in (a symbolic link, writable by
    /// everyone without the sticky bit, owned by another user); the subject is the directory. Exit 78.
    case unsafeDirectory
    /// The event names cannot be announced: their `hello` line would be over 8 KiB (`EventNameRules`). Exit 78.
    case tooManyEvents

    /// 64 for `pathTooLong`/`rejected`, 69 for `inUse`/`system`/`noDaemon`/`full`, 78 for `notASocket`/
    /// `tooManyEvents`/`unsafeDirectory`, 65 for `protocolViolation`.
    public var exitCode: ExitCode {
        switch self {
        case .pathTooLong, .rejected: .usage
        case .inUse, .system, .noDaemon, .full: .unavailable
        case .notASocket, .tooManyEvents, .unsafeDirectory: .configuration
        case .protocolViolation: .dataError
        }
    }
}
