#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: the `errno` value it left (`<errno.h>`), e.g. `ECONNRESET`.
///
/// The one error type for system calls in every module (camera, event socket, input client, daemon);
/// after swift-system's `Errno`. Its `description` names the constant and gives the `strerror(3)` text
/// (`ECONNRESET: Connection reset by peer`); `message` is the text alone, for sentences a person reads.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C `errno` value.
    public var code: Int32

    /// The error for the C `errno` value `code`.
    public init(code: Int32) { self.code = code }

    /// The calling thread's current `errno`: read it right after the call that failed.
    public static var current: Errno { Errno(code: errno) }

    /// The constant's name from `<errno.h>`, e.g. "ECONNRESET"; "errno N" for a value not listed here.
    /// Where two names share a value (`EAGAIN`/`EWOULDBLOCK`, `ENOTSUP`/`EOPNOTSUPP`), the first is given.
    public var name: String { Self.names[code] ?? "errno \(code)" }

    /// `strerror(3)` text, e.g. "Connection reset by peer".
    public var message: String { String(cString: strerror(code)) }

    /// `NAME: strerror text`, e.g. `ECONNRESET: Connection reset by peer`.
    public var description: String { "\(name): \(message)" }

    /// `EINTR`: a signal arrived before the call finished; the call may simply be made again.
    public var isInterrupted: Bool { code == EINTR }

    /// `EAGAIN` (= `EWOULDBLOCK` on Linux): a non-blocking call would have had to wait.
    public var wouldBlock: Bool { code == EAGAIN || code == EWOULDBLOCK }

    private static let names: [Int32: String] = {
        let listed: [(Int32, String)] = [
            (EPERM, "EPERM"), (ENOENT, "ENOENT"), (ESRCH, "ESRCH"), (EINTR, "EINTR"), (EIO, "EIO"),
            (ENXIO, "ENXIO"), (E2BIG, "E2BIG"), (ENOEXEC, "ENOEXEC"), (EBADF, "EBADF"), (ECHILD, "ECHILD"),
            (EAGAIN, "EAGAIN"), (ENOMEM, "ENOMEM"), (EACCES, "EACCES"), (EFAULT, "EFAULT"), (EBUSY, "EBUSY"),
            (EEXIST, "EEXIST"), (EXDEV, "EXDEV"), (ENODEV, "ENODEV"), (ENOTDIR, "ENOTDIR"), (EISDIR, "EISDIR"),
            (EINVAL, "EINVAL"), (ENFILE, "ENFILE"), (EMFILE, "EMFILE"), (ENOTTY, "ENOTTY"), (ETXTBSY, "ETXTBSY"),
            (EFBIG, "EFBIG"), (ENOSPC, "ENOSPC"), (ESPIPE, "ESPIPE"), (EROFS, "EROFS"), (EMLINK, "EMLINK"),
            (EPIPE, "EPIPE"), (EDOM, "EDOM"), (ERANGE, "ERANGE"), (EDEADLK, "EDEADLK"),
            (ENAMETOOLONG, "ENAMETOOLONG"), (ENOLCK, "ENOLCK"), (ENOSYS, "ENOSYS"), (ENOTEMPTY, "ENOTEMPTY"),
            (ELOOP, "ELOOP"), (ENOMSG, "ENOMSG"), (ENODATA, "ENODATA"), (ETIME, "ETIME"), (ENOLINK, "ENOLINK"),
            (EPROTO, "EPROTO"), (EOVERFLOW, "EOVERFLOW"), (EILSEQ, "EILSEQ"), (ENOTSOCK, "ENOTSOCK"),
            (EDESTADDRREQ, "EDESTADDRREQ"), (EMSGSIZE, "EMSGSIZE"), (EPROTOTYPE, "EPROTOTYPE"),
            (ENOPROTOOPT, "ENOPROTOOPT"), (EPROTONOSUPPORT, "EPROTONOSUPPORT"), (EOPNOTSUPP, "EOPNOTSUPP"),
            (EAFNOSUPPORT, "EAFNOSUPPORT"), (EADDRINUSE, "EADDRINUSE"), (EADDRNOTAVAIL, "EADDRNOTAVAIL"),
            (ENETDOWN, "ENETDOWN"), (ENETUNREACH, "ENETUNREACH"), (ECONNABORTED, "ECONNABORTED"),
            (ECONNRESET, "ECONNRESET"), (ENOBUFS, "ENOBUFS"), (EISCONN, "EISCONN"), (ENOTCONN, "ENOTCONN"),
            (ESHUTDOWN, "ESHUTDOWN"), (ETIMEDOUT, "ETIMEDOUT"), (ECONNREFUSED, "ECONNREFUSED"),
            (EHOSTUNREACH, "EHOSTUNREACH"), (EALREADY, "EALREADY"), (EINPROGRESS, "EINPROGRESS"),
            (ESTALE, "ESTALE"), (EDQUOT, "EDQUOT"), (ECANCELED, "ECANCELED"),
        ]
        return Dictionary(listed, uniquingKeysWith: { first, _ in first })
    }()
}

/// Calls `body` until it does not fail with `EINTR`: the one retry loop for system calls (after
/// swift-system's `valueOrErrno(retryOnInterrupt:)`), for calls already wrapped to throw `Errno` (such as
/// `V4L2Syscalls`' methods). Never wrap `close(2)`: on Linux the descriptor is gone even when it fails with
/// `EINTR`, and a retry could close one another thread has just opened.
/// - Throws: the first `Errno` other than `EINTR`.
public func retryingOnInterrupt<T>(_ body: () throws(Errno) -> T) throws(Errno) -> T {
    while true {
        do {
            return try body()
        } catch where error.isInterrupted {
            continue
        }
    }
}

/// Makes a raw C call, which returns -1 and sets `errno` on failure (`read`, `write`, `poll`, `accept`,
/// `connect`, `ioctl`, ...), and returns its result; with `retryOnInterrupt`, calls it again while it fails
/// with `EINTR` (a signal arrived first). As swift-system's internal helper of the same name, but throwing.
/// - Throws: `Errno` from the call's `errno` when it returned -1 (never `EINTR` when retrying).
public func valueOrErrno<I: FixedWidthInteger>(retryOnInterrupt: Bool, _ call: () -> I) throws(Errno) -> I {
    func once() throws(Errno) -> I {
        let result = call()
        if result == -1 { throw Errno.current }
        return result
    }
    return retryOnInterrupt ? try retryingOnInterrupt(once) : try once()
}
